"""torch's process-wide settings that change how fast the same code runs (child process).

User code runs in the measuring process: a factory (or the step itself) may call
`torch.set_num_threads(1)`, `torch.set_float32_matmul_precision("high")`, turn TF32 on or
change the default dtype. Those settings are part of what the step does, so they are
recorded (`changed`: what differs from before the factory ran). But the yardstick
(timing.Yardstick) measures the machine, not the step: it is built and timed with these
settings put back to their values from before the factory (`pinned`), and the step's own
values restored after each yardstick block, so user code cannot move it.

`num_interop_threads` is recorded only: torch refuses to change it once parallel work began.
Standard library and torch only; every getter is guarded (names differ across 2.1-2.14).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Callable, Dict

import torch

# typing.Dict: an alias is evaluated at import, and dict[...] needs Python 3.9 (the child 3.8)
State = Dict[str, Any]


def _matmul_precision() -> Any:
    getter = getattr(torch, "get_float32_matmul_precision", None)
    return getter() if getter is not None else None


def _deterministic() -> Any:
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = getattr(torch, "is_deterministic_algorithms_warn_only_enabled", None)
    if enabled and warn_only is not None and warn_only():
        return "warn_only"
    return bool(enabled)


GETTERS: dict[str, Callable[[], Any]] = {
    "num_threads": torch.get_num_threads,
    "num_interop_threads": torch.get_num_interop_threads,
    "float32_matmul_precision": _matmul_precision,
    "cuda.matmul.allow_tf32": lambda: bool(torch.backends.cuda.matmul.allow_tf32),
    "cudnn.allow_tf32": lambda: bool(torch.backends.cudnn.allow_tf32),
    "deterministic_algorithms": _deterministic,
    "default_dtype": lambda: str(torch.get_default_dtype()).replace("torch.", ""),
}


def capture() -> State:
    """Every tracked setting's current value (a JSON-ready scalar), None where unreadable."""
    state: State = {}
    for name, getter in GETTERS.items():
        try:
            state[name] = getter()
        except Exception:
            state[name] = None
    return state


def changed(before: State, after: State) -> dict[str, dict[str, Any]]:
    """{name: {before, after}} for each setting that differs (pure)."""
    return {
        name: {"before": before.get(name), "after": after.get(name)}
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


def apply(state: State, current: State | None = None) -> None:
    """Set every setting `state` holds a value for that differs from `current` (default:
    capture()); interop threads excepted. Only what differs is touched: on 2.9+ writing a
    TF32 flag (the legacy API) after the new one was used makes torch refuse to read the
    matmul precision."""
    current = capture() if current is None else current
    setters: dict[str, Callable[[Any], None]] = {
        "num_threads": torch.set_num_threads,
        "float32_matmul_precision": _set_matmul_precision,
        "cuda.matmul.allow_tf32": _set_cuda_tf32,
        "cudnn.allow_tf32": _set_cudnn_tf32,
        "deterministic_algorithms": _set_deterministic,
        "default_dtype": lambda name: torch.set_default_dtype(getattr(torch, name)),
    }
    for name, setter in setters.items():
        value = state.get(name)
        if name == "cuda.matmul.allow_tf32":  # follows the matmul precision just set
            current = capture()
        if value is not None and value != current.get(name):
            with contextlib.suppress(Exception):
                setter(value)


@contextlib.contextmanager
def pinned(state: State) -> Iterator[None]:
    """Run the block under `state`; whatever was set before the block is put back after it."""
    saved = capture()
    if all(saved[name] == state.get(name) for name in saved if name != "num_interop_threads"):
        yield
        return
    apply(state, saved)
    try:
        yield
    finally:
        apply(saved, state)


def _set_matmul_precision(value: str) -> None:
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision(value)


def _set_cuda_tf32(value: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = value


def _set_cudnn_tf32(value: bool) -> None:
    torch.backends.cudnn.allow_tf32 = value


def _set_deterministic(value: Any) -> None:
    if value == "warn_only":
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        torch.use_deterministic_algorithms(bool(value))
