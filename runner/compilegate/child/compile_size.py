"""How big the compiled region is: the ATen ops of one eager call of it (`eager_ops`).

The compile-work counts (FX nodes, guards, generated kernels) grow with the model: a pull
request that adds a layer adds FX nodes, guards and kernels in proportion, and judged as raw
counts it failed the 5 % tolerance (issue 31: +8.8 % FX nodes for one more layer of a 2-layer
GPT). Judged per eager op (judges/compile_cost.py), a bigger model compiles to the same
work per op, while the same model compiling into more graphs, guards or kernels does not.

The count is taken once, after everything timed, on an eager copy: one forward (and loss),
no backward, under the step's autocast, through a TorchDispatchMode that counts each
ATen op call (torch 1.13+). For `compile_target: model` only the ops inside the model's own
call are counted (its forward hooks switch the count on and off); for `step`, forward and
loss (the compiled optimizer step is left out: running it would change the weights).
None when the count fails: the judge then falls back to the raw counts.

Child-process only: standard library and torch.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .training import TrainingStep, autocast_context


def count_eager_ops(step: TrainingStep, index: int, compile_target: str) -> int | None:
    """ATen op calls of one eager forward (+ loss for `step`) of batch `index`, or None."""
    try:
        return _count(step, index, compile_target)
    except Exception:  # a step the count cannot run: no size, the counts are judged raw
        return None


def _count(step: TrainingStep, index: int, compile_target: str) -> int:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpCounter(TorchDispatchMode):
        def __init__(self, counting: bool) -> None:
            # torch leaves TorchDispatchMode.__init__ unannotated (untyped_calls_exclude
            # does not reach a super() call)
            super().__init__()  # type: ignore[no-untyped-call]
            self.counting = counting
            self.calls = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if self.counting:
                self.calls += 1
            return func(*args, **(kwargs or {}))

    parts = step.parts
    counter = OpCounter(counting=compile_target != "model")
    hooks = []
    if compile_target == "model":
        hooks = [
            parts.model.register_forward_pre_hook(lambda *_: _switch(counter, True)),
            parts.model.register_forward_hook(lambda *_: _switch(counter, False)),
        ]
    try:
        inputs = parts.batch(index)
        # Grad mode as the step runs it (no backward): under no_grad some modules take
        # another path (nn.TransformerEncoderLayer's fused one in eval mode).
        with torch.enable_grad(), autocast_context(step.device, step.amp), counter:
            parts.loss(parts.model, inputs)
    finally:
        for hook in hooks:
            with contextlib.suppress(Exception):
                hook.remove()
    return counter.calls


def _switch(counter: Any, on: bool) -> None:
    counter.counting = on
