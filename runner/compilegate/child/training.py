"""The training loop compilegate owns: zero_grad, forward+loss, backward, optimizer step.

`TrainingStep` runs one iteration of a user's step eagerly or under torch.compile.
zero_grad is never inside a compiled region (it is a guaranteed graph break, see the
instrumentation notes §8). Child-process only: imports torch.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any, Callable

import torch

from . import distributed
from .user_code import StepDefinitionError, StepParts

AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def autocast_context(device: str, amp: str | None) -> Any:
    if amp is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device, dtype=AMP_DTYPES[amp])


class TrainingStep:
    """One copy of the step: its own model, optimizer and (optionally) compiled callables.

    `compile_kwargs` None means eager. `compile_target` "model" compiles the model;
    "step" compiles forward+loss as one function and, separately, optimizer.step
    (the PyTorch compiled-optimizer recipe; the optimizer's own graph breaks are expected);
    "blocks" compiles each block of the model's repeated blocks in place (regional
    compilation: `repeated_blocks`), the rest of the model stays eager; `self.blocks` says
    which.
    """

    def __init__(
        self,
        parts: StepParts,
        *,
        device: str,
        amp: str | None = None,
        compile_kwargs: dict[str, Any] | None = None,
        compile_target: str = "model",
        group: distributed.RankGroup | None = None,
    ) -> None:
        self.parts = parts
        self.device = device
        self.amp = amp
        self.compiled = compile_kwargs is not None
        # Called between backward and optimizer.step (numerics reads the grads there).
        self.before_optimizer_step: Callable[[], None] | None = None
        # Sees whether forward, loss and backward draw random numbers (numerics_env.RngWatch);
        # with `rng_watch_model_only`, the model's forward and the backward, not the loss's
        # forward (draws there stay outside a compiled model).
        self.rng_watch: Any = None
        self.rng_watch_model_only = False
        self._mark_step_begin = (
            cudagraph_mark_step_begin()
            if compile_kwargs and compile_kwargs.get("mode") == "reduce-overhead"
            else None
        )
        self._forward_loss: Callable[[Any], Any]
        # In a distributed step's rank (`group`), the model under its wrapper
        # (child/distributed.py; FSDP2 shards the parameters in place and gives `parts` an
        # optimizer over them).
        model, loss_fn = distributed.wrap(parts, device, repeated_blocks, group), parts.loss
        self._model = model
        self._optimizer_step: Callable[[], Any] = parts.optimizer.step
        self.blocks: dict[str, Any] | None = None  # results/model.RegionalBlocks
        if compile_kwargs is None:
            self._forward_loss = lambda inputs: loss_fn(model, inputs)
        elif compile_target == "blocks":
            name, blocks = repeated_blocks(model)
            for i in range(len(blocks)):
                blocks[i] = torch.compile(blocks[i], **compile_kwargs)
            kind = type(blocks[0]._orig_mod).__name__
            self.blocks = {"name": name, "count": len(blocks), "class_name": kind}
            self._forward_loss = lambda inputs: loss_fn(model, inputs)
        elif compile_target == "model":
            compiled_model = torch.compile(model, **compile_kwargs)
            self._forward_loss = lambda inputs: loss_fn(compiled_model, inputs)
        else:

            def forward_and_loss(inputs: Any) -> Any:
                return loss_fn(model, inputs)

            optimizer = parts.optimizer

            def optimizer_step() -> None:
                optimizer.step()

            self._forward_loss = torch.compile(forward_and_loss, **compile_kwargs)
            optimizer_kwargs = {**compile_kwargs, "fullgraph": False}
            self._optimizer_step = torch.compile(optimizer_step, **optimizer_kwargs)

    def __call__(self, index: int, *, check: bool = False) -> Any:
        """Run iteration `index`; with `check`, insist on a finite scalar loss (syncs)."""
        parts = self.parts
        if self._mark_step_begin is not None:
            self._mark_step_begin()
        parts.optimizer.zero_grad(set_to_none=True)
        inputs = parts.batch(index)
        watch, model_only = self.rng_watch, self.rng_watch_model_only
        if watch is not None and not model_only:
            watch.start()
        with autocast_context(self.device, self.amp), _watching(self._model, watch, model_only):
            loss = self._forward_loss(inputs)
        if check:
            check_loss(loss, index)
        if watch is not None and model_only:
            watch.start()
        loss.backward()
        if watch is not None:
            watch.stop()
        if self.before_optimizer_step is not None:
            self.before_optimizer_step()
        self._optimizer_step()
        if parts.scheduler is not None:
            parts.scheduler.step()
        return loss.detach()


@contextlib.contextmanager
def _watching(model: Any, watch: Any, model_only: bool) -> Iterator[None]:
    """With `model_only`, `watch` around each call of the model's forward, else nothing."""
    if watch is None or not model_only:
        yield
        return
    before = model.register_forward_pre_hook(lambda *_: watch.start())
    after = model.register_forward_hook(lambda *_: watch.stop())
    try:
        yield
    finally:
        before.remove()
        after.remove()


# What the child records when nothing repeats (the variant's `regional_absent`: a code,
# results/model.Absence; report/absence_words.py words it).
NO_REPEATED_BLOCK = "no_repeated_block"


class NoRepeatedBlock(Exception):
    """The model has no block that repeats: regional compilation has nothing to reuse."""


def repeated_blocks(model: Any) -> tuple[str, Any]:
    """The model's repeated blocks: the nn.ModuleList or nn.Sequential of two or more
    modules of one class, each made of modules (a block, not a lone Linear), holding the
    most parameters (a transformer's layers), with its name; NoRepeatedBlock says why there
    is none."""
    found = []
    for name, module in model.named_modules():
        if not isinstance(module, (torch.nn.ModuleList, torch.nn.Sequential)) or len(module) < 2:
            continue
        first = module[0]
        if len({type(block) for block in module}) == 1 and any(True for _ in first.children()):
            size = sum(p.numel() for p in module.parameters())
            found.append((size, name or "(model)", module))
    if not found:
        raise NoRepeatedBlock(
            "the model has no nn.ModuleList or nn.Sequential of two or more blocks of one "
            "class: regional compilation has no repeated block to compile once and reuse"
        )
    _, name, blocks = max(found, key=lambda item: item[0])
    return name, blocks


def cudagraph_mark_step_begin() -> Callable[[], None] | None:
    """Tell CUDA-graph trees that an iteration starts (its heuristic fails when one iteration
    calls two compiled functions, as compile target "step" does). torch.compiler has it from
    2.2; 2.1 keeps it in torch._inductor."""
    compiler = getattr(torch, "compiler", None)
    mark = getattr(compiler, "cudagraph_mark_step_begin", None)
    if mark is None:
        mark = getattr(getattr(torch, "_inductor", None), "cudagraph_mark_step_begin", None)
    return mark


def check_loss(loss: Any, index: int) -> None:
    """A loss must be a finite scalar tensor that requires grad."""
    if not isinstance(loss, torch.Tensor):
        raise StepDefinitionError(
            f"loss(model, inputs) returned {type(loss).__name__}, not a tensor (iteration {index})"
        )
    if loss.numel() != 1:
        raise StepDefinitionError(
            f"loss(model, inputs) returned a tensor of shape {tuple(loss.shape)}, "
            f"not a scalar (iteration {index})"
        )
    if not loss.requires_grad:
        raise StepDefinitionError(
            f"loss(model, inputs) does not require grad: nothing to train (iteration {index})"
        )
    value = float(loss.detach().float())
    if not math.isfinite(value):
        raise StepDefinitionError(f"loss is {value} at iteration {index}")


def seed_everything(seed: int) -> None:
    import random

    random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    with contextlib.suppress(ImportError):
        import numpy

        numpy.random.seed(seed)
