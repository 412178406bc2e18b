"""Per-iteration timers and the interleaved-rounds schedule (child process).

On CUDA each iteration is bracketed by CUDA events and the device is synchronized once
per block, not per iteration (a per-iteration synchronize serializes host and device and
penalizes launch-bound eager steps). On CPU, perf_counter around each iteration: CPU
kernels, Inductor's included, run synchronously.

The garbage collector is held still during each timed block (disabled while it runs, as
pyperf's runs keep it out of the timed code): a collection that starts inside the block
lands on whichever iteration allocated last, a slow iteration that is the collector's, not
the step's. What the block allocated is collected after it, outside the timing. One full
collection before the first round, not one per block: on the H200 a collection of a process
holding a compiled transformer took ~130 ms, and one per block lengthened every round by
0.4–1 s (0.8 → 1.2 s a round in the eager reference).
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Sequence
from typing import Any, Callable

import torch

from .torch_state import State, pinned

Iteration = Callable[[int], Any]


class CpuTimer:
    name = "perf_counter"

    def time_block(self, step: Iteration, indices: Sequence[int]) -> list[float]:
        """Milliseconds of each `step(i)`."""
        out = []
        for index in indices:
            start = time.perf_counter()
            step(index)
            out.append((time.perf_counter() - start) * 1e3)
        return out


class CudaEventTimer:
    name = "cuda_event"

    def time_block(self, step: Iteration, indices: Sequence[int]) -> list[float]:
        pairs = []
        torch.cuda.synchronize()
        for index in indices:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            step(index)
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in pairs]


@contextlib.contextmanager
def gc_held() -> Any:
    """Keep the garbage collector off until the block ends (what piled up meanwhile is
    collected at the first allocation after it, outside the timing)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def timer_for(device: str) -> CpuTimer | CudaEventTimer:
    return CudaEventTimer() if device == "cuda" else CpuTimer()


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def round_sizes(iterations: int, rounds: int) -> list[int]:
    """Split `iterations` into `rounds` near-equal blocks."""
    base, extra = divmod(iterations, rounds)
    return [base + (1 if r < extra else 0) for r in range(rounds)]


def interleaved_rounds(
    sides: dict[str, Iteration],
    *,
    first_index: int,
    iterations: int,
    rounds: int,
    timer: CpuTimer | CudaEventTimer,
    on_round: Callable[[int], None] | None = None,
) -> dict[str, dict[str, list[Any]]]:
    """Time every side for `iterations` iterations, in `rounds` interleaved blocks.

    The order of the sides rotates each round, so no side always runs first (after an
    idle GPU, a cold cache or a frequency change). Every side sees the same batch indices.
    Returns, per side, `samples` (ms, in order) and `rounds` (the round of each sample).
    """
    names = list(sides)
    out: dict[str, dict[str, list[Any]]] = {n: {"samples": [], "rounds": []} for n in names}
    gc.collect()  # once, before the first round (the module's docstring)
    index = first_index
    for round_no, size in enumerate(round_sizes(iterations, rounds)):
        indices = list(range(index, index + size))
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            block = getattr(sides[name], "block", contextlib.nullcontext)
            with block(), gc_held():
                samples = timer.time_block(sides[name], indices)
            out[name]["samples"].extend(samples)
            out[name]["rounds"].extend([round_no] * len(samples))
        index += size
        if on_round is not None:
            on_round(round_no)
    return out


def timed_warmup(step: Iteration, indices: Sequence[int], device: str) -> list[float]:
    """Wall seconds of each warm-up iteration, device synchronized (compile happens here)."""
    out = []
    for index in indices:
        synchronize(device)
        start = time.perf_counter()
        step(index)
        synchronize(device)
        out.append(time.perf_counter() - start)
    return out


class Yardstick:
    """A fixed workload timed in the same rounds as the step: the machine's own speed.

    Step times compared across runs (days apart, maybe another runner of the same model)
    move with the machine: CPU steal, clocks, a neighbour's load. Interleaved with the step,
    this workload moves with it, so step time divided by yardstick time cancels that drift
    the way the speedup ratio does. Matrix products plus a chain of small element-wise
    kernels, to feel both compute and per-kernel overhead.

    It must not move with the user's code: it is built, and each of its blocks timed, under
    `clean` (torch_state.capture() from before the factory ran: threads, matmul precision,
    TF32, deterministic algorithms, default dtype); interleaved_rounds enters `block()`
    around its blocks, outside the timed iterations.
    """

    def __init__(self, device: str, clean: State | None = None) -> None:
        self.clean = clean
        size = 1024 if device == "cuda" else 160
        with self.block():
            generator = torch.Generator().manual_seed(0)
            self.a = torch.randn(size, size, generator=generator, dtype=torch.float32).to(device)
            b = torch.randn(size, size, generator=generator, dtype=torch.float32).to(device)
            self.b = b / size**0.5

    def block(self) -> Any:
        return contextlib.nullcontext() if self.clean is None else pinned(self.clean)

    def __call__(self, index: int) -> None:
        x = self.a
        for _ in range(4):
            x = torch.tanh(x @ self.b)
        for _ in range(8):
            x = x * 0.5 + 0.25
        x.sum()


def yardstick(device: str, clean: State | None = None) -> Yardstick:
    return Yardstick(device, clean)


class LaunchYardstick:
    """A chain of tiny element-wise kernels on a small tensor: the machine's dispatch speed.

    Each op does almost no arithmetic, so its time is the host's: Python and torch's
    dispatcher, and on CUDA the kernel launch. A launch-bound step (many small kernels, as
    the seed's transformer on an H200: the host dispatched ~13 ms of them and wandered
    11.4–17.8 ms within 45 s with the SM clock fixed) moves with this, not with the matmul
    yardstick, which keeps the GPU busy. results/yardsticks.py picks, per comparison, the
    yardstick the step's processes follow. 48 ops: ~0.3 ms an iteration on a CUDA host,
    ~0.15 ms on this CPU.
    """

    OPS = 48

    def __init__(self, device: str, clean: State | None = None) -> None:
        self.clean = clean
        with self.block():
            self.x = torch.linspace(0.0, 1.0, 64, dtype=torch.float32).to(device)

    def block(self) -> Any:
        return contextlib.nullcontext() if self.clean is None else pinned(self.clean)

    def __call__(self, index: int) -> None:
        x = self.x
        for _ in range(self.OPS // 2):
            x = x * 0.5 + 0.25
        x.sum()


def yardstick_launch(device: str, clean: State | None = None) -> LaunchYardstick:
    return LaunchYardstick(device, clean)


YARDSTICKS = ("yardstick", "yardstick_launch")  # the sides' names in interleaved_rounds


def yardsticks(device: str, clean: State | None = None) -> dict[str, Any]:
    """Both yardsticks, as sides of interleaved_rounds: the GPU-bound (compute) one and the
    launch-bound one (results/yardsticks.py picks which a comparison divides by)."""
    return {
        "yardstick": yardstick(device, clean),
        "yardstick_launch": yardstick_launch(device, clean),
    }
