"""Measure one step eagerly (with an A/A twin) or one compiled variant against eager (child).

Every copy of the step is built by calling the user's factory with the same seed, so the
copies start identical. Raw per-iteration samples go back to the parent, which does the
statistics (stats.py): this module only runs and times.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any, Callable

import torch

from . import instruction_counter, torch_state
from .compile_cost import cpu_method, elapsed, now
from .compile_size import count_eager_ops
from .control import ControlLine
from .cpu_pinning import pinned
from .distributed import RankGroup
from .dynamo_logs import PathClassifier
from .protocol import EntryPoint, Phase
from .step_work import count_step_work
from .timing import interleaved_rounds, synchronize, timed_warmup, timer_for, yardsticks
from .training import TrainingStep, seed_everything
from .user_code import StepParts, build_parts, load_factory

Progress = Callable[[Phase, str], None]


class StepBuilder:
    """Builds fresh, identical copies of the user's step (same seed each time).

    `clean_state` is torch's global state from before user code was imported: the state the
    yardstick is timed in, and what `torch_state_record` compares against."""

    def __init__(
        self,
        entry: EntryPoint,
        repo_root: Path,
        device: str,
        seed: int,
        side: str = "",
        *,
        group: RankGroup | None = None,
    ) -> None:
        """`group`: in a distributed step's rank, its group (child/distributed.py): every
        copy runs under the group's wrapper."""
        self.entry, self.repo_root, self.device, self.seed = entry, repo_root, device, seed
        self.group = group
        self.clean_state = torch_state.capture()
        self._factory = load_factory(entry, repo_root, side)

    def torch_state_record(self) -> dict[str, Any]:
        """What user code (the factory, its module, the step) changed in torch's settings."""
        return {"changed": torch_state.changed(self.clean_state, torch_state.capture())}

    def build(self) -> StepParts:
        seed_everything(self.seed)
        return build_parts(self._factory, self.device, self.entry, self.repo_root)


def persistent_bytes(parts: StepParts) -> int:
    """Bytes held between steps by one copy: parameters, grads, buffers, optimizer state."""
    seen: set[int] = set()
    total = 0

    def add(tensor: Any) -> None:
        nonlocal total
        if isinstance(tensor, torch.Tensor) and tensor.device.type == "cuda":
            key = (
                tensor.untyped_storage().data_ptr()
                if hasattr(tensor, "untyped_storage")
                else tensor.data_ptr()
            )
            if key not in seen:
                seen.add(key)
                total += tensor.numel() * tensor.element_size()

    for p in parts.model.parameters():
        add(p)
        add(p.grad)
    for b in parts.model.buffers():
        add(b)
    for state in parts.optimizer.state.values():
        for value in state.values():
            add(value)
    return total


def peak_step_bytes(step: TrainingStep, index: int, device: str) -> int | None:
    """Peak CUDA memory of one steady-state iteration of this copy, as if it ran alone.

    The process holds several copies; counting everything allocated would charge each
    copy for the others. So: this copy's persistent state plus the peak above what was
    allocated when the iteration began. None on CPU (no allocator statistics there).
    """
    if device != "cuda":
        return None
    synchronize(device)
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step(index)
    synchronize(device)
    return persistent_bytes(step.parts) + torch.cuda.max_memory_allocated() - before


def _checked(step: TrainingStep) -> Callable[[int], Any]:
    return lambda index: step(index, check=True)


def measure_eager(
    builder: StepBuilder,
    settings: dict[str, Any],
    progress: Progress,
    control: ControlLine | None = None,
) -> dict[str, Any]:
    """Two identical eager copies, interleaved: the step's eager time and the run's noise.
    `control`: the line to the parent, asked before the timed rounds (None: nothing waits)."""
    device, amp = builder.device, settings["amp"]
    warmup, iterations, rounds = settings["warmup"], settings["iterations"], settings["rounds"]
    progress(Phase.BUILD, "building eager copies")
    eager_a = TrainingStep(builder.build(), device=device, amp=amp, group=builder.group)
    eager_b = TrainingStep(builder.build(), device=device, amp=amp, group=builder.group)
    progress(Phase.EAGER_WARMUP, f"eager warm-up ({warmup} iterations per copy)")
    warmup_s = timed_warmup(_checked(eager_a), range(warmup), device)
    timed_warmup(_checked(eager_b), range(warmup), device)
    if control is not None:  # a child started ahead may still be importing (control.py)
        control.wait_for_quiet()
    progress(
        Phase.TIMED, f"measuring eager A/A: {iterations} iterations per copy in {rounds} rounds"
    )
    with pinned(torch.get_num_threads()) as cpus:
        timed = interleaved_rounds(
            {
                "eager": eager_a,
                "eager_b": eager_b,
                **yardsticks(device, builder.clean_state),
            },
            first_index=warmup,
            iterations=iterations,
            rounds=rounds,
            timer=timer_for(device),
            on_round=lambda r: progress(Phase.TIMED, f"round {r + 1}/{rounds}"),
        )
    end = warmup + iterations
    peak = peak_step_bytes(eager_a, end, device)
    return {
        "warmup_s": warmup_s,
        "timed": timed,
        "cpus": cpus,
        "peak_bytes": peak,
        "torch_state": builder.torch_state_record(),
        "step_work": step_work(eager_a, warmup, progress, builder.repo_root),
    }


def step_work(
    step: TrainingStep, index: int, progress: Progress, repo_root: Any = None
) -> dict[str, Any]:
    """The step-work counts of one more iteration of `step` at batch `index` (the first
    timed one, which every process of the step has run, so nothing compiles), after
    everything timed; the copy is not used after it (child/step_work.py). With the
    repository's root (eager), also where its code calls `.item()`."""
    progress(
        Phase.STEP_WORK, f"step work: one untimed iteration under the profiler (batch {index})"
    )
    paths = PathClassifier.for_torch(repo_root) if repo_root is not None else None
    return count_step_work(step, index, paths)


def measure_variant(
    builder: StepBuilder,
    settings: dict[str, Any],
    variant: dict[str, Any],
    progress: Progress,
    probe: Any = None,
    *,
    timing_only: bool = False,
    load: Callable[[], dict[str, Any]] | None = None,
    control: ControlLine | None = None,
    counts_only: bool = False,
) -> dict[str, Any]:
    """Eager (A and B) and one compiled variant, interleaved in the same process; `control`
    (None: nothing waits) asked before the timed rounds.

    `counts_only`: the counting pass alone (`compilegate bisect`): the same copies, compile
    window, probe, epoch end and step-work pass, but the rounds' iterations run once each,
    untimed, in the compiled copy (so a shape they bring recompiles, inside the probe, as in
    the rounds), and no memory pass; `timed` is {}. What it counts is what a full run counts.

    `timing_only`: a variant's later process, which only times: no memory passes (the first
    process measured the peaks; None here) and no epoch end. `load`: called first inside the
    compile window (cache_artifacts.load: the process starts from the first one's
    compile-cache artifacts); what it returns is the compile record's `artifacts`.

    `probe` is a context manager (diagnostics.CompileProbe) wrapped around everything the
    compiled copy does, or None. The compile window runs from the torch.compile() call to
    the end of the compiled warm-up (the lazily compiled backward is in its first
    iteration); the compile cost is that window minus eager's warm-up, in wall and in CPU
    seconds of the process tree (compile_cost.py), as in PyTorch's own benchmark harness.
    """
    iterations, rounds = settings["iterations"], settings["rounds"]
    end = settings["warmup"] + iterations
    with contextlib.ExitStack() as probed:
        copies = VariantCopies(builder, settings, variant, progress, probe, probed, load)
        if counts_only:
            timed, cpus = untimed_rounds(copies.compiled, settings, progress), None
        else:
            if control is not None:  # a child started ahead may still be importing (control.py)
                control.wait_for_quiet()
            progress(Phase.TIMED, f"measuring: {iterations} iterations per side in {rounds} rounds")
            with pinned(torch.get_num_threads()) as cpus:
                timed = interleaved_rounds(
                    {**copies.sides(), **yardsticks(builder.device, builder.clean_state)},
                    first_index=settings["warmup"],
                    iterations=iterations,
                    rounds=rounds,
                    timer=timer_for(builder.device),
                    on_round=lambda r: progress(Phase.TIMED, f"round {r + 1}/{rounds}"),
                )
        memory = not (timing_only or counts_only)
        peak = peak_step_bytes(copies.compiled, end, builder.device) if memory else None
        epoch_length = None if timing_only else settings.get("epoch_length")
        late = epoch_end(copies.compiled, copies.eager_a, end + 1, epoch_length, progress)
    eager_peak = peak_step_bytes(copies.eager_a, end, builder.device) if memory else None
    # The compiled region's size, once, untimed, outside the probe (compile_size.py); a
    # timing-only process (no probe) does not need it.
    eager_ops = (
        count_eager_ops(copies.eager_a, end, variant["compile_target"])
        if probe is not None
        else None
    )
    measured = {
        **copies.result(timed, peak, builder.torch_state_record(), late, eager_peak=eager_peak),
        "cpus": cpus,
        "compile": {**copies.compile_record(), "eager_ops": eager_ops},
    }
    if probe is not None:  # the first process: the compiled copy's work, counted last
        measured["step_work"] = step_work(copies.compiled, settings["warmup"], progress)
    if counts_only:  # eager's work too (an eager process's pass, on this process's copy)
        eager_index = settings["warmup"]
        measured["eager_step_work"] = step_work(
            copies.eager_a, eager_index, progress, builder.repo_root
        )
    return measured


def untimed_rounds(
    compiled: TrainingStep, settings: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """The rounds' batches, once each and untimed, in the compiled copy: what the counting
    pass (measure_variant's `counts_only`) runs in place of the timed rounds; {}."""
    first = settings["warmup"]
    indices = range(first, first + settings["iterations"])
    progress(Phase.TIMED, f"counting: {len(indices)} iterations once, untimed")  # the rounds
    for index in indices:
        compiled(index)
    return {}


class VariantCopies:
    """Two eager copies and one compiled copy of the step, built and warmed up; the compile
    window measured (measure_variant's docstring)."""

    def __init__(
        self,
        builder: StepBuilder,
        settings: dict[str, Any],
        variant: dict[str, Any],
        progress: Progress,
        probe: Any = None,
        probed: contextlib.ExitStack | None = None,
        load: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        """`probe` (or None) is entered into `probed` just before the compile: everything
        the compiled copy does, to the end of the caller's `probed` block, runs inside it.
        `load` (or None) runs first in the compile window (measure_variant's docstring)."""
        device, amp, warmup = builder.device, settings["amp"], settings["warmup"]
        self.device, self.end = device, warmup + settings["iterations"]
        progress(Phase.BUILD, "building copies")
        group = builder.group
        self.eager_a = TrainingStep(builder.build(), device=device, amp=amp, group=group)
        self.eager_b = TrainingStep(builder.build(), device=device, amp=amp, group=group)
        compiled_parts = builder.build()
        progress(Phase.EAGER_WARMUP, f"eager warm-up ({warmup} iterations)")
        eager_start = now()
        self.eager_warmup_s = timed_warmup(_checked(self.eager_a), range(warmup), device)
        self.eager_window = elapsed(eager_start, now())
        timed_warmup(_checked(self.eager_b), range(warmup), device)
        # The window opens before the probe: its set-up imports torch._dynamo, which a user's
        # first torch.compile() pays too (seconds; a timing-only process pays it in the call).
        start = now()
        self.artifacts = load() if load is not None else None
        # The first process (the one with the probe) also counts the compile's instructions.
        counted = instruction_counter.begin() if probe is not None else None
        if probe is not None and probed is not None:
            probed.enter_context(probe)
        self.compiled = TrainingStep(
            compiled_parts,
            device=device,
            amp=amp,
            compile_kwargs=variant["compile_kwargs"],
            compile_target=variant["compile_target"],
            group=group,
        )
        self.call_s = time.perf_counter() - start.wall_s
        progress(Phase.COMPILE, f"compiling: warm-up 1/{warmup} includes the compile")
        self.warmup_s: list[float] = []
        for index in range(warmup):
            self.warmup_s.extend(timed_warmup(_checked(self.compiled), [index], device))
            progress(
                Phase.COMPILE, f"compiled warm-up {index + 1}/{warmup}: {self.warmup_s[-1]:.2f} s"
            )
        self.window = elapsed(start, now())
        if group is not None:  # a DDP rank's graph count stops here (child/distributed.py)
            group.compiled()
        self.cache_hits = compile_cache_hits()
        self.instructions = (
            None if probe is None else counted if counted is not None else instruction_counter.end()
        )

    def sides(self) -> dict[str, Any]:
        return {"eager": self.eager_a, "eager_b": self.eager_b, "compiled": self.compiled}

    def result(
        self,
        timed: dict[str, Any],
        peak: int | None,
        torch_state: dict[str, Any],
        late: dict[str, Any],
        *,
        eager_peak: int | None = None,
    ) -> dict[str, Any]:
        """The process's measurement record; `eager_peak` None: not measured (a timing-only
        process; measure_variant measures it otherwise)."""
        return {
            "warmup_s": self.warmup_s,
            "eager_warmup_s": self.eager_warmup_s,
            "timed": timed,
            "peak_bytes": peak,
            "eager_peak_bytes": eager_peak,
            "compile": self.compile_record(),
            "torch_state": torch_state,
            **late,
        }

    def compile_record(self) -> dict[str, Any]:
        return {
            "call_s": self.call_s,
            "window": {"wall_s": self.window.wall_s, "cpu_s": self.window.cpu_s},
            "eager_window": {
                "wall_s": self.eager_window.wall_s,
                "cpu_s": self.eager_window.cpu_s,
            },
            "cpu_method": cpu_method(),
            "cache_hits": self.cache_hits,
            **({"blocks": self.compiled.blocks} if self.compiled.blocks is not None else {}),
            **({"artifacts": self.artifacts} if self.artifacts is not None else {}),
            **({"instructions": self.instructions} if self.instructions is not None else {}),
        }


def epoch_indices(first: int, epoch_length: int) -> list[int]:
    """The first epoch end at or after `first`, and the next epoch's first batch."""
    last = -(-(first + 1) // epoch_length) * epoch_length - 1
    return [last, last + 1]


def epoch_end(
    compiled: TrainingStep,
    eager: TrainingStep,
    first: int,
    epoch_length: int | None,
    progress: Progress,
) -> dict[str, Any]:
    """Run the epoch's last batch (and the next epoch's first) in the compiled copy and in
    eager, after everything timed: the step's own batch(i) decides their shapes, so a last
    batch of another size (a loader with drop_last=False) recompiles here, inside the
    probe, which counts it. Charged: each index's compiled wall time beyond eager's (0 when
    nothing recompiled). {} without an epoch schedule."""
    if not epoch_length:
        return {}
    indices = epoch_indices(first, epoch_length)
    progress(
        Phase.MEMORY_EPOCH,
        f"epoch end: batches {indices[0]} and {indices[1]} (epoch length {epoch_length})",
    )
    device = compiled.device
    compiled_s = timed_warmup(_checked(compiled), indices, device)
    eager_s = timed_warmup(_checked(eager), indices, device)
    return {
        "epoch_indices": indices,
        "late_recompile_s": sum(max(c - e, 0.0) for c, e in zip(compiled_s, eager_s)),
    }


def compile_cache_hits() -> int | None:
    """Inductor FX-graph and AOTAutograd cache hits so far in this process (None: torch has
    no such counters). A compile that hit a cache is warm."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return None
    return int(
        counters["inductor"].get("fxgraph_cache_hit", 0)
        + counters["aot_autograd"].get("autograd_cache_hit", 0)
    )
