"""A variant's compile cost in the result: wall, CPU and work counts, per process and pooled.

Each variant process reports its compile window (child/measure.py: from the torch.compile()
call to the end of the compiled warm-up, so the lazily compiled backward is in it) and eager's
warm-up window, in wall and CPU seconds of the process tree (child/compile_cost.py). The
compile cost is their difference. A process compiled cold when its Inductor cache directory
was fresh, or when it hit no compile cache (torch 2.4 has the FX-graph cache off by default:
every process compiles cold); otherwise warm.

    compile_s / compile_cost.wall_s   the first process's compile wall seconds
    compile_cost.cpu_s                its CPU seconds (process + compile workers)
    compile_cost.counts               torch's work counts, from the first process
    compile_cost.cold_samples         [{wall_s, cpu_s}] of every cold process that has both
    compile_cost.cpu_noise_pct        95 % half-width of cpu_s over those, percent of the mean
    compile_cost.warm_wall_s          median compile wall seconds of the warm processes
    compile_cost.instructions         instructions the first process's compile executed (torch's
                                      compile-time instruction counter), or
                                      instructions_absent: why not (no hardware counter)
    compile_cost.artifacts_wall_s     median compile wall seconds of the processes that started
                                      from the first one's cache artifacts (their loading in
                                      it); artifacts_bytes, or artifacts_absent: why none
    compile_cost.eager_ops            ATen ops of one eager call of the compiled region, from
                                      the first process (child/compile_size.py): what the
                                      judge divides FX nodes, guards and kernels by

Pure functions from a child's parts (a process's typed at the door, process_report.py; its
compile record read leniently, each value of a wrong type no value) to the document's types
(results/model.py).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from .model import Absence, ColdSample, CompileCost, CompileCounts, Process, RegionalBlocks
from .stats import CONFIDENCE, t_quantile

# How a process's Inductor cache directory came to it (run/step_measurement.py): ARTIFACTS,
# an empty one into which the process loaded its first process's cache artifacts.
FRESH, REUSED, SHARED, ARTIFACTS = "fresh", "reused", "shared", "artifacts"
ARTIFACTS_LABEL = "artifacts"
MAX_REASON_CHARS = 500  # a reason or a name the child gives, as the document keeps it
MAX_NAME_CHARS = 100  # a regional block's attribute or class name (the schema's limit)


def cache_label(cache_dir: str, hits: int | None) -> str:
    """ "cold" or "warm": cold by construction (a fresh directory) or by what torch counted;
    "artifacts" for a process that started from the cache artifacts."""
    if cache_dir == ARTIFACTS:
        return ARTIFACTS_LABEL
    if cache_dir == FRESH:
        return "cold"
    if hits is None:  # a torch without cache counters: not cold by construction
        return "warm"
    return "warm" if hits > 0 else "cold"


@dataclass(frozen=True)
class ProcessCompile:
    """A variant process's compile, as its process record keeps it: wall and CPU seconds
    (None when not measured) and whether it compiled cold or warm."""

    wall_s: float | None
    cpu_s: float | None
    cache: str

    def on(self, record: Process) -> Process:
        """The process record with its compile fields."""
        return replace(
            record, compile_wall_s=self.wall_s, compile_cpu_s=self.cpu_s, cache=self.cache
        )


def process_compile(
    record: CompileRecord,
    cache_dir: str,
    warmup_s: Sequence[float] | None = None,
    eager_warmup_s: Sequence[float] | None = None,
) -> ProcessCompile:
    """The process record's compile fields: compile_wall_s, compile_cpu_s, cache.

    A child document without a compile window (a test's stand-in child) gives the wall time
    from the warm-up lists (`warmup_s`, `eager_warmup_s`), the way compilegate measured it
    before the window existed."""
    window, eager = record.window, record.eager_window
    wall_s = _difference(window.wall_s, eager.wall_s)
    if wall_s is None and warmup_s is not None and eager_warmup_s is not None:
        wall_s = math.fsum(warmup_s) - math.fsum(eager_warmup_s)
    return ProcessCompile(
        wall_s=wall_s,
        cpu_s=_difference(window.cpu_s, eager.cpu_s),
        cache=cache_label(cache_dir, record.cache_hits),
    )


def counts_of(counts: Any) -> CompileCounts:
    """The work counts a child reported (child/compile_size.py; None: it counted none): each
    an integer >= 0, a value of another type no count."""
    found = counts if isinstance(counts, Mapping) else {}
    return CompileCounts(**{key: _count(found.get(key)) for key in CompileCounts.REQUIRED})


def compile_cost(
    records: Sequence[Process],
    counts: CompileCounts,
    cpu_method: str | None = None,
    eager_ops: int | None = None,
    artifacts: CacheArtifacts | None = None,
) -> CompileCost:
    """The variant's compile_cost from its process records (the first one first), the first
    process's work counts, how its CPU time was read, the compiled region's size and what it
    saved of the cache artifacts (None: not asked)."""
    first = records[0]
    cold = [
        ColdSample(wall_s=r.compile_wall_s, cpu_s=r.compile_cpu_s)
        for r in records
        if r.cache == "cold" and _number(r.compile_wall_s) and _number(r.compile_cpu_s)
    ]
    warm = [
        r.compile_wall_s for r in records[1:] if r.cache == "warm" and _number(r.compile_wall_s)
    ]
    loaded = [
        r.compile_wall_s
        for r in records[1:]
        if r.cache == ARTIFACTS_LABEL and _number(r.compile_wall_s)
    ]
    return CompileCost(
        wall_s=first.compile_wall_s,
        cpu_s=first.compile_cpu_s,
        counts=counts,
        cold_samples=tuple(cold),
        cpu_noise_pct=half_width_pct([sample.cpu_s for sample in cold]),
        warm_wall_s=statistics.median(warm) if warm else None,
        cpu_method=cpu_method or None,
        eager_ops=eager_ops if _is_size(eager_ops) else None,
        artifacts_wall_s=statistics.median(loaded) if loaded else None,
        artifacts_bytes=artifacts.saved_bytes if artifacts is not None else None,
        artifacts_absent=artifacts.absent if artifacts is not None else None,
        absent_torch=artifacts.torch if artifacts is not None else None,
    )


def with_instructions(cost: CompileCost, counted: InstructionCount | None) -> CompileCost:
    """The compile cost with the first process's instruction count, or why none (None: not
    counted)."""
    if counted is None:
        return cost
    return replace(
        cost,
        instructions=counted.instructions,
        instructions_absent=counted.absent,
        absent_torch=counted.torch or cost.absent_torch,
    )


@dataclass(frozen=True)
class InstructionCount:
    """The instructions the first process's compile executed, or why none
    (child/instruction_counter.py)."""

    instructions: int | None
    absent: Absence | str | None
    torch: str | None = None  # the torch an absence names (it has no counter)

    @classmethod
    def of(cls, counted: Any) -> InstructionCount | None:
        """From the child's compile record's `instructions` (None: not counted); a value of
        the wrong type is no count and no reason."""
        if not isinstance(counted, Mapping):
            return None
        value = counted.get("instructions")
        return cls(
            instructions=value if _is_size(value) else None,
            absent=absence_of(counted.get("absent")),
            torch=_name(counted.get("torch")),
        )


@dataclass(frozen=True)
class CacheArtifacts:
    """What a variant's first process saved of its compile-cache artifacts: their size, or
    why none (child/cache_artifacts.py)."""

    saved_bytes: int | None
    absent: Absence | str | None
    torch: str | None = None  # the torch an absence names (it has no save API)

    @classmethod
    def of(cls, saved: Any) -> CacheArtifacts | None:
        """From the child's compile record's `artifacts` (None: not asked); a value of the
        wrong type is no size and no reason."""
        if not isinstance(saved, Mapping):
            return None
        size = saved.get("saved_bytes")
        return cls(
            saved_bytes=size if _is_size(size) else None,
            absent=absence_of(saved.get("absent")),
            torch=_name(saved.get("torch")),
        )

    @classmethod
    def kept(cls, cost: CompileCost) -> CacheArtifacts | None:
        """What a pooled compile cost already recorded."""
        if cost.artifacts_bytes is None and cost.artifacts_absent is None:
            return None
        return cls(cost.artifacts_bytes, cost.artifacts_absent, cost.absent_torch)


def absence_of(why: Any) -> Absence | str | None:
    """The child's `absent`: a code (Absence); a sentence (a string with a space: an older
    child's), kept; anything else no reason."""
    if not isinstance(why, str):
        return None
    try:
        return Absence(why)
    except ValueError:
        return why[:MAX_REASON_CHARS] if " " in why else None


def _name(value: Any) -> str | None:
    """A short name the child gives (a torch version), or None."""
    return value[:100] if isinstance(value, str) and value else None


@dataclass(frozen=True)
class CompileWindow:
    """Wall and CPU seconds from the torch.compile() call to the end of the compiled warm-up
    (`window`), or of eager's warm-up (`eager_window`): child/compile_cost.py."""

    wall_s: float | None = None
    cpu_s: float | None = None

    @classmethod
    def of(cls, raw: Any) -> CompileWindow:
        found = raw if isinstance(raw, Mapping) else {}
        return cls(_lenient_number(found.get("wall_s")), _lenient_number(found.get("cpu_s")))


@dataclass(frozen=True)
class CompileRecord:
    """A variant process's compile record (child/measure.py's compile_record), each value
    typed at the door (process_report.py), one of another type read as none."""

    window: CompileWindow = CompileWindow()
    eager_window: CompileWindow = CompileWindow()
    call_s: float | None = None
    cpu_method: str | None = None
    cache_hits: int | None = None
    eager_ops: int | None = None
    counts: CompileCounts | None = None  # None: it counted none (a timing-only process)
    blocks: RegionalBlocks | None = None  # regional compilation: the repeated blocks
    artifacts: CacheArtifacts | None = None  # None: not asked to save them
    instructions: InstructionCount | None = None  # None: not counted

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> CompileRecord:
        """From the child's compile record (child/measure.py), a JSON object."""
        cpu_method, blocks, counts = raw.get("cpu_method"), raw.get("blocks"), raw.get("counts")
        return cls(
            window=CompileWindow.of(raw.get("window")),
            eager_window=CompileWindow.of(raw.get("eager_window")),
            call_s=_lenient_number(raw.get("call_s")),
            cpu_method=cpu_method[:MAX_REASON_CHARS] if isinstance(cpu_method, str) else None,
            cache_hits=_count(raw.get("cache_hits")),
            eager_ops=_count(raw.get("eager_ops")),
            counts=counts_of(counts) if isinstance(counts, Mapping) else None,
            blocks=_blocks(blocks),
            artifacts=CacheArtifacts.of(raw.get("artifacts")),
            instructions=InstructionCount.of(raw.get("instructions")),
        )


def _blocks(raw: Any) -> RegionalBlocks | None:
    """The child's repeated blocks, {name, count, class_name}; None for anything else."""
    if not isinstance(raw, Mapping):
        return None
    name, count, class_name = raw.get("name"), raw.get("count"), raw.get("class_name")
    if not (isinstance(name, str) and isinstance(class_name, str)):
        return None
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        return None
    return RegionalBlocks(name[:MAX_NAME_CHARS], count, class_name[:MAX_NAME_CHARS])


def half_width_pct(values: Sequence[float]) -> float | None:
    """95 % confidence half-width of the mean, percent of the mean; None below two values."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean <= 0:
        return None
    t = t_quantile(0.5 + CONFIDENCE / 2, len(values) - 1)
    return 100.0 * t * statistics.stdev(values) / math.sqrt(len(values)) / mean


def _difference(a: Any, b: Any) -> float | None:
    return float(a) - float(b) if _number(a) and _number(b) else None


def _lenient_number(value: Any) -> float | None:
    """A JSON number (finite: a part holding another was set apart at the door), or None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return value if ok else None


def _count(value: Any) -> int | None:
    """An integer >= 0, or None for anything else."""
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
