"""The state numerics runs in (child process): TF32 off, and `fallback_random` only when the
step draws random numbers.

Inductor draws its own random numbers unless `torch._inductor.config.fallback_random` is set,
so a compiled dropout never matches eager's; numerics sets it for such steps. But
`fallback_random` is part of the FX-graph cache key (shared/reference/compile-cost-levers.md
§2): setting it means a second cold compile of the step in the first process, 19 s of the
demo's 96 s first process on this project's 2-core CPU. A step that draws no random numbers
where the compiled code runs (checked on the eager copy: the RNG state did not move in a
compiled model's forward or in the backward, or, for a compiled step, in its loss either)
has no random op in its graph, so the setting would change nothing: numerics then runs the code
the timed compile produced (Dynamo's cache, or the FX-graph cache it filled) and checks the
very kernels that were timed.

`torch._dynamo.reset()` around a `fallback_random` run: Dynamo's guards do not see Inductor
config, so the setting would be silently ignored by code compiled before.
TF32 is CUDA-only: off on both sides on a GPU (as in PyTorch's accuracy runs: equal settings,
comparable errors); on CPU nothing is touched, which would only change the cache key.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch


@contextlib.contextmanager
def tf32_off(device: str) -> Iterator[bool]:
    """TF32 off and matmul precision "highest" on CUDA, restored after; yields whether any
    setting had to change (then code compiled before may not be reused)."""
    if device != "cuda":
        yield False
        return
    saved_matmul = torch.backends.cuda.matmul.allow_tf32
    saved_cudnn = torch.backends.cudnn.allow_tf32
    getter = getattr(torch, "get_float32_matmul_precision", None)
    saved_precision = getter() if getter is not None else None
    changed = saved_matmul or saved_cudnn or saved_precision not in (None, "highest")
    try:
        if saved_precision is not None and saved_precision != "highest":
            torch.set_float32_matmul_precision("highest")
        if torch.backends.cuda.matmul.allow_tf32:
            torch.backends.cuda.matmul.allow_tf32 = False
        if torch.backends.cudnn.allow_tf32:
            torch.backends.cudnn.allow_tf32 = False
        yield bool(changed)
    finally:
        if saved_precision is not None:
            torch.set_float32_matmul_precision(saved_precision)
        torch.backends.cuda.matmul.allow_tf32 = saved_matmul
        torch.backends.cudnn.allow_tf32 = saved_cudnn


def _inductor_config() -> Any:
    """torch._inductor.config (its options set by name), or None where it cannot be
    imported."""
    try:
        import torch._inductor.config as config
    except Exception:
        return None
    return config


@contextlib.contextmanager
def fresh_dynamo(fallback_random: bool) -> Iterator[None]:
    """Dynamo reset before and after, with `fallback_random` set in between (restored)."""
    import torch._dynamo

    inductor_config = _inductor_config()
    saved = getattr(inductor_config, "fallback_random", None)
    torch._dynamo.reset()
    try:
        if inductor_config is not None and fallback_random:
            inductor_config.fallback_random = True
        yield
    finally:
        torch._dynamo.reset()
        if inductor_config is not None and saved is not None:
            inductor_config.fallback_random = saved


class RngWatch:
    """Whether a region drew from the default generators (CPU, and CUDA when present)."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.drew = False
        self._before: list[torch.Tensor] = []

    def _states(self) -> list[torch.Tensor]:
        states = [torch.random.get_rng_state()]
        if self.device == "cuda" and torch.cuda.is_available():
            states.append(torch.cuda.get_rng_state())
        return states

    def start(self) -> None:
        self._before = self._states()

    def stop(self) -> None:
        after = self._states()
        if any(not torch.equal(a, b) for a, b in zip(self._before, after)):
            self.drew = True
