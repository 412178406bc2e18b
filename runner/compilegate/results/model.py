"""The result document as a type: frozen dataclasses mirroring schemas/result.schema.json.

`parse(raw, source, role)` is the one door in. It checks what the schema cannot (no NaN or
Infinity, unique step names and variant ids), validates against the schema, upgrades the
shapes an earlier compilegate wrote, and builds the dataclasses; after it, gate, report and
the run side read attributes and never test for a missing key. `to_json()` is the one door
out. A baseline is a result accepted from the default branch (schemas/baseline.schema.json),
read with role="baseline".

Older shapes, upgraded here:
- a baseline from before compile cost and torch state were recorded lacks a variant's
  `compile_cost` and `torch_state`: both read as None (the gate says they are new);
- `dynamic`, `fullgraph`, `backend`, `compile_target` absent on a variant read as the
  defaults `torch.compile` uses (VARIANT_DEFAULTS);
- a document from before the config's `accept_label` was recorded reads the default label
  (null, which turns acceptance off, is kept as null and written back as null);
- a document from before step work was counted (child/step_work.py) lacks `step_work` on
  eager and on its variants: it reads as None (not counted), never as zero work;
- a document from before the decision and run health were recorded as facts (issue 53)
  holds sentences: a recommendation's `text` and `withheld` read as recorded (report/ says
  them so), each `run_health.unsteady` and `unsteady_times` sentence as a RecordedCause
  (results/health_causes.py), written back unchanged;
- a document from before how a speedup and a ratio were estimated was recorded as a code
  (SpeedupEstimator, RatioMethod) holds a sentence in `estimator` and `method`: kept as
  recorded (a str), said as recorded;
- a document from before the child recorded why a count was not taken, and why numerics
  reached no verdict, as codes (Absence, NumericsReason) holds the child's sentence in
  step work's `absent`, compile cost's `instructions_absent` and `artifacts_absent`, and
  numerics' `reason`: kept as recorded, said as recorded; its failed diagnostics pass is a
  note in `degraded`, not a `diagnostics_error`;
- a document from before CUDA-graph skips were recorded (child/cuda_graph_skips.py) lacks a
  variant's `cuda_graphs`: it reads as None (not recorded), never as no skips.

Mirrors: a field per schema property, the same names; a nullable or optional property is
`X | None` (None when null or absent), an array a tuple, a status an enum. Objects the schema
leaves open (a step's `settings`, a variant's `cache`, `measurement_env`, `torch_state`'s
changed values, a history run's variants) stay read-only mappings.
tests/contract/test_result_model.py holds the fields equal to the schema's properties.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ..config.model import DEFAULT_ACCEPT_LABEL
from ..errors import BaselineError
from ..schemas import MAX_ERRORS, format_key_path, validation_errors
from .health_causes import (
    MeasuredCause,
    RecordedCause,
    UnsteadyCause,
    UnsteadyMark,
    cause_of_json,
    mark_of_json,
)

ROLES = ("result", "baseline")
# Keys a baseline recorded by an earlier compilegate lacks (compile cost and torch state
# came later): such a baseline is still judged against.
KEYS_OLD_BASELINES_LACK = ("compile_cost", "torch_state")
# What an absent variant definition key means: torch.compile's own defaults.
VARIANT_DEFAULTS = {
    "mode": "default",
    "dynamic": None,
    "compile_target": "model",
    "fullgraph": False,
    "backend": "inductor",
}
# A variant that ran carries every gated measurement: one that could not be measured is
# an explicit null, never a missing key (the schema's rule for status "ok").
MEASURED_WHEN_OK = (
    "compile_s",
    "noise_pct",
    "peak_bytes",
    "recompiles",
    "graph_breaks",
    "fallbacks_to_eager",
    "torch_state",
)
# What else the run records of a variant that ran, null when unknown (results/document.py):
# written back as null too, so that a document goes out as the run recorded it.
RECORDED_WHEN_OK = (
    "compile_call_s",
    "late_recompile_s",
    "eager_peak_bytes",
    "break_even_steps",
    "compiled_process_noise_pct",
    "speedup_process_noise_pct",
)
# What the run records of eager, null when unknown (results/document.py's eager_entry).
EAGER_MEASURED = ("peak_bytes", "noise_pct", "torch_state")
# A decided recommendation carries these of the quoted variant's payoff, null when unknown.
PAYOFF_NULLS = (
    "speedup",
    "break_even_steps",
    "warm_break_even_steps",
    "saving_s",
    "processes_needed",
)
# What the run records of its environment, null when unknown (results/document.py's
# DocumentHead): the probe writes these keys (child/environment.py), the run the commit.
ENVIRONMENT_NULLS = (
    "torch_git_version",
    "cuda",
    "cudnn",
    "driver",
    "processor",
    "cpu_model",
    "cpu_count",
    "torch_num_threads",
    "commit",
)
MAX_DETAIL_CHARS = 200


class Status(str, enum.Enum):
    OK = "ok"
    ERROR = "error"


class NumericsStatus(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"
    ERROR = "error"


class ComparedBy(str, enum.Enum):
    """How a numerics check compared compiled with eager (child/numerics.py)."""

    ALLCLOSE_ELSE_FP64_RMSE = "allclose_else_fp64_rmse"
    ALLCLOSE_ELSE_COSINE = "allclose_else_cosine"  # no float64 reference


class Decision(str, enum.Enum):
    COMPILE = "compile"
    STAY_EAGER = "stay_eager"
    UNDECIDED = "undecided"


class Caveat(str, enum.Enum):
    """What a reader must know beside a recommendation's decision (results/recommendation.py;
    report/decision_words.py words each)."""

    NO_VARIANT_RAN = "no_variant_ran"  # no compiled variant ran successfully
    NUMERICS_UNTRUSTED = "numerics_untrusted"  # no timed variant's numerics can be trusted
    LEVER_CACHE_ARTIFACTS = "lever_cache_artifacts"  # the cheapest lever inside the run
    LEVER_REGIONAL = "lever_regional"
    NOT_WHOLLY_COMPILED = "not_wholly_compiled"  # report/degraded_words.py says why
    NUMERICS_UNCHECKED = "numerics_unchecked"


class SpeedupEstimator(str, enum.Enum):
    """How a payoff's speedup was estimated (results/payoff.py; report/speeds.py words each).
    A document from before it was recorded as a code holds the sentence instead."""

    # Eager ÷ compiled mean step time (outliers included) per process, geometric mean over
    # the processes (the payoff's `processes`), 95 % t interval.
    MEAN_OVER_PROCESSES = "mean_over_processes"
    # The same ratio in the one process, its 95 % interval from the round-block bootstrap.
    MEAN_ONE_PROCESS = "mean_one_process"


class RatioMethod(str, enum.Enum):
    """How a ratio's interval was found (results/stats.py). A document from before it was
    recorded as a code holds the sentence instead."""

    BOOTSTRAP_MEDIAN = "bootstrap_median"  # round-block bootstrap of the median ratio
    BOOTSTRAP_MEAN = "bootstrap_mean"  # round-block bootstrap of the mean ratio
    SINGLE_ROUND = "single_round"  # one round: no interval (low = high = the ratio)


class Absence(str, enum.Enum):
    """Why the child took no count (child/step_work.py, instruction_counter.py,
    cache_artifacts.py) or no regional lever (child/main.py); report/absence_words.py words
    each. A document from before it was
    recorded as a code holds the child's sentence instead."""

    # Step work (a count of StepWorkCounts):
    CPU_NO_KERNELS = "cpu_no_kernels"  # kernels on the CPU: ATen's and Inductor's C++ ones
    CPU_NO_CUDA_GRAPHS = "cpu_no_cuda_graphs"  # CUDA graphs exist only on CUDA
    NO_COMPILED_REGION = "no_compiled_region"  # this torch's profiler marks none
    NO_COMPILED_REGION_OPS = "no_compiled_region_ops"  # so ATen ops cannot be told apart
    RECOMPILED = "recompiled"  # the counted iteration compiled: not a steady step
    COUNT_PASS_FAILED = "count_pass_failed"  # its exception: StepWork.pass_error
    # The compile's instructions (CompileCost.instructions_absent):
    NO_INSTRUCTION_COUNTER = "no_instruction_counter"  # this torch (CompileCost.torch) has none
    NO_HARDWARE_COUNTER = "no_hardware_counter"  # perf_event_open refused
    # Cache artifacts (CompileCost.artifacts_absent):
    NO_SAVE_CACHE_ARTIFACTS = "no_save_cache_artifacts"  # this torch (CompileCost.torch)
    NO_INDUCTOR_CACHE_DIR = "no_inductor_cache_dir"
    SAVED_NOTHING = "saved_nothing"
    # Regional compilation (RegionalLever.absent; since issue 53's last items):
    NO_REPEATED_BLOCK = "no_repeated_block"  # the model has no repeated block to compile
    # Recorded by the parent: the lever's process failed (RegionalLever.failure and .error
    # say how), or gave no report of the variant to record.
    PROCESS_FAILED = "process_failed"
    NOT_MEASURED = "not_measured"


class NumericsReason(str, enum.Enum):
    """Why a numerics check reached no verdict, or that it compared the tensors
    (child/numerics.py; report/absence_words.py and report/numerics_words.py word each). A
    document from before it was recorded as a code holds the child's sentence instead."""

    SKIPPED_ZERO_STEPS = "skipped_zero_steps"  # numerics.steps is 0
    ERROR = "error"  # the copies raised: Numerics.error is the exception
    # A verdict (since issue 53's last items): said from `checked`, `failed` and why there
    # was no float64 reference (`reference_error`, `reference_disagreement`).
    COMPARED = "compared"


class DisagreementKind(str, enum.Enum):
    """How the float64 reference's loss was not eager's (child/numerics.py)."""

    DIFFERS = "differs"  # by more than rounding allows
    NOT_FINITE = "not_finite"  # NaN or inf on one side only


class Withheld(str, enum.Enum):
    """Why a run gives no decision although it measured one."""

    UNSTEADY_MACHINE = "unsteady_machine"  # its run_health: the step times support none


class Model:
    """What every document class shares: the door out."""

    # Optional properties written as null when None (the schema requires them, nullable).
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    def to_json(self, *, as_recorded: bool = False) -> dict[str, Any]:
        """The object as JSON. `as_recorded`: as the run records a measurement (run/), with
        the nulls it writes for what it could not measure (`recorded_nulls`); else only the
        nulls the schema requires (a document read and written back keeps its own)."""
        out: dict[str, Any] = {}
        nulls = self.written_as_null()
        if as_recorded:
            nulls = (*nulls, *self.recorded_nulls())
        for item in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if value is None and item.name not in nulls:
                continue
            out[item.name] = _to_json(value, as_recorded)
        return out

    def written_as_null(self) -> tuple[str, ...]:
        """The properties the schema requires of this object even when null."""
        return self.REQUIRED

    def recorded_nulls(self) -> tuple[str, ...]:
        """What else the run writes as null when it records this object (results/document.py
        and the child's reports): its result documents keep the keys they always had."""
        return ()


def _to_json(value: Any, as_recorded: bool = False) -> Any:
    if isinstance(value, Model):
        return value.to_json(as_recorded=as_recorded)
    if isinstance(value, (MeasuredCause, RecordedCause)):
        return value.to_json()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_to_json(v, as_recorded) for v in value]
    if isinstance(value, Mapping):
        return {k: _to_json(v, as_recorded) for k, v in value.items()}
    return value


# --- environment, head ---------------------------------------------------------------


@dataclass(frozen=True)
class Tool(Model):
    REQUIRED = ("name", "version")
    name: Any = None
    version: str | None = None


@dataclass(frozen=True)
class ConfigRef(Model):
    path: str | None = None
    sha256: str | None = None
    # Absent in older documents: read at the door as the default label.
    accept_label: str | None = DEFAULT_ACCEPT_LABEL

    def written_as_null(self) -> tuple[str, ...]:
        """accept_label null turns acceptance off: written as null, since left out it would
        read as the default label."""
        return ("accept_label",)


@dataclass(frozen=True)
class Pairing(Model):
    id: str
    role: str
    base_label: str | None = None
    head_label: str | None = None
    mode: str | None = None
    order: str | None = None


@dataclass(frozen=True)
class Environment(Model):
    REQUIRED = ("torch", "device", "gpu_name", "python")
    torch: str | None = None
    torch_git_version: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    device: str | None = None
    gpu_name: str | None = None
    gpu_count: int | None = None
    driver: str | None = None
    python: str | None = None
    python_executable: str | None = None
    platform: str | None = None
    processor: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    torch_num_threads: int | None = None
    timer: str | None = None
    commit: str | None = None
    inductor_cache: str | None = None
    measurement_env: Mapping[str, str] | None = None
    # The hardware-class fields the measuring interpreter reported otherwise than compilegate
    # read them (run/machine_reading.py); the fields hold compilegate's reading. None: none
    # differed, or a document written before compilegate read them.
    probe_overruled: tuple[str, ...] | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """What the run records of its environment even when unknown: the keys the probe
        writes null where it found nothing (child/environment.py), and the commit."""
        return ENVIRONMENT_NULLS


@dataclass(frozen=True)
class MachineHealth(Model):
    seconds: float | None = None
    cpu_count: int | None = None
    load_average_mean: float | None = None
    load_average_max: float | None = None
    others_cpu_pct: float | None = None
    steal_pct: float | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """The run records every figure, null where it could not read it
        (run/machine_load.py)."""
        return _field_names(self)


@dataclass(frozen=True)
class GpuHealth(Model):
    name: str | None = None
    driver: str | None = None
    persistence_mode: bool | None = None
    power_limit_w: float | None = None
    samples: int | None = None
    busy_samples: int | None = None
    sm_mhz_min: float | None = None
    sm_mhz_max: float | None = None
    mem_mhz_min: float | None = None
    mem_mhz_max: float | None = None
    throttled: tuple[str, ...] | None = None
    other_processes: int | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """The run records every figure, null where NVML gave none (run/gpu_state.py)."""
        return _field_names(self)


@dataclass(frozen=True)
class RunHealth(Model):
    REQUIRED = ("unsteady",)
    machine: MachineHealth | None = None
    gpu: GpuHealth | None = None
    aa_noise_pct: float | None = None
    yardstick_drift_pct: float | None = None
    multi_threaded: bool | None = None
    # Why the machine was unsteady (results/run_health.py; empty: steady): facts, or in a
    # document from before they were, the sentences it recorded.
    unsteady: tuple[UnsteadyCause, ...] = ()

    def recorded_nulls(self) -> tuple[str, ...]:
        """The run records each sign, null when it has none (results/run_health.py)."""
        return ("gpu", "aa_noise_pct", "yardstick_drift_pct")


def _field_names(model: Model) -> tuple[str, ...]:
    return tuple(item.name for item in dataclasses.fields(model))  # type: ignore[arg-type]


# --- measurements --------------------------------------------------------------------


@dataclass(frozen=True)
class Timing(Model):
    median: float
    samples: tuple[float, ...]
    mean: float | None = None
    stdev: float | None = None
    p10: float | None = None
    p90: float | None = None
    min: float | None = None
    max: float | None = None
    n: int | None = None
    rounds: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Ratio(Model):
    median: float
    ci_low: float
    ci_high: float
    confidence: float | None = None
    method: RatioMethod | str | None = None  # str: an older document's sentence


@dataclass(frozen=True)
class FastestMs(Model):
    eager: float
    eager_b: float | None = None
    compiled: float | None = None
    yardstick: float | None = None
    yardstick_launch: float | None = None


@dataclass(frozen=True)
class Process(Model):
    fastest_ms: FastestMs
    step_ms: float | None = None
    samples_ms: Mapping[str, tuple[float, ...]] | None = None
    compile_wall_s: float | None = None
    compile_cpu_s: float | None = None
    cache: str | None = None
    cpus: tuple[int, ...] | None = None
    phases_s: Mapping[str, float] | None = None
    head_vs_base: Mapping[str, float] | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """What the run records of every process even when unknown (results/processes.py's
        process_record), and of a variant's process (one with a `cache`) its compile times
        (results/compile_cost.py's process_compile)."""
        compiled = ("compile_wall_s", "compile_cpu_s") if self.cache is not None else ()
        return ("cpus", "phases_s", *compiled)


@dataclass(frozen=True)
class TorchState(Model):
    changed: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class StepWorkCounts(Model):
    """Each count over one iteration; None exactly when StepWork.absent says why. Every
    count is required (written as null when absent): REQUIRED is the fields, declared
    once, below the class."""

    aten_ops: int | None = None
    compiled_region_calls: int | None = None
    kernels: int | None = None
    cuda_graph_replays: int | None = None
    host_syncs: int | None = None
    flops: int | None = None
    allocations: int | None = None
    allocated_bytes: int | None = None


StepWorkCounts.REQUIRED = tuple(item.name for item in dataclasses.fields(StepWorkCounts))


@dataclass(frozen=True)
class StepWorkTiming(Model):
    """The profiled iteration's times (child/step_work.py): slowed by the profiler, never
    gated; what bounds the step reads them against each other (results/step_bound.py)."""

    REQUIRED = ("device_busy_ms", "dispatch_us")
    profiled_ms: float
    compute_ms: float
    compute_top: tuple[tuple[str | float | int, ...], ...]
    device_busy_ms: float | None = None
    dispatch_us: float | None = None


@dataclass(frozen=True)
class StepWork(Model):
    """What one steady iteration of the step does, counted (child/step_work.py): the counts,
    why each missing one is missing, and per count the names that make it up."""

    counts: StepWorkCounts
    absent: Mapping[str, Absence | str]  # str: an older document's sentence, as recorded
    top: Mapping[str, tuple[tuple[str | int, ...], ...]]
    batch_index: int
    timing: StepWorkTiming | None = None
    sync_sites: tuple[tuple[str | int, ...], ...] | None = None
    pass_error: str | None = None  # Absence.COUNT_PASS_FAILED: the exception, torch's words

    def sites(self) -> dict[str, int]:
        """Where eager's code called `.item()` or `.tolist()`: file:line → calls ({} when
        not recorded)."""
        return {str(site): int(calls) for site, calls in self.sync_sites or ()}

    def count(self, key: str) -> int | None:
        """The count named `key` (StepWorkCounts.REQUIRED), None when absent."""
        value: int | None = getattr(self.counts, key)
        return value

    def named(self, key: str) -> dict[str, int]:
        """The top names of count `key`, name → value ({} for none or an absent count)."""
        return {str(name): int(value) for name, value in self.top.get(key, ())}


@dataclass(frozen=True)
class Eager(Model):
    step_ms: Timing
    warmup_s: tuple[float, ...] | None = None
    peak_bytes: int | None = None
    aa_ratio: Ratio | None = None
    noise_pct: float | None = None
    yardstick_ms: Timing | None = None
    per_yardstick: Ratio | None = None
    processes: tuple[Process, ...] | None = None
    torch_state: TorchState | None = None
    step_work: StepWork | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """What the run records of eager even when unknown (results/document.py)."""
        return EAGER_MEASURED


class RecompileReason(str, enum.Enum):
    """Why a function recompiled where torch gave no guard that failed (since issue 53's
    last items; report/absence_words.py words each). Torch's own reason is kept as text."""

    NO_GUARD_FAILURE_LOGGED = "no_guard_failure_logged"  # torch <= 2.4: one per module instance
    UNKNOWN_GUARD_FAILURE = "unknown_guard_failure"  # logged without a guard


@dataclass(frozen=True)
class RecompileEvent(Model):
    REQUIRED = ("line",)
    function: str
    file: str
    reason: RecompileReason | str  # torch's text, or a code where it gave none
    line: int | None = None
    origin: str | None = None
    reasons: tuple[str, ...] | None = None
    compile_id: str | None = None


@dataclass(frozen=True)
class RecompileLimit(Model):
    """The recompile limit a function hit (since issue 53; report/degraded_notes.py words
    it): torch's config `name` and its `value`, the function that then ran eagerly and the
    last guard that failed, where the warning named them."""

    name: str
    value: int
    function: str | None = None
    file: str | None = None
    line: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Recompiles(Model):
    count: int
    events: tuple[RecompileEvent, ...]
    limit_hit: bool | None = None
    # An older document's note on the limit, in words (never read: its degraded notes say
    # it); since issue 53's last items the child records only `limit`.
    limit_message: str | None = None
    limit: RecompileLimit | None = None  # absent before issue 53, or the limit not hit


# Where a graph break degrades the compile: the user's code, an installed library (torch's
# own are not theirs to fix; child/graph_break_sites.py GATED_ORIGINS).
DEGRADING_ORIGINS = ("repo", "library")


class FallbackKind(enum.Enum):
    """Why Dynamo gave up on a whole frame, which then ran eagerly (child/diagnostics_report.py)."""

    GRAPH_BREAK = "graph_break"  # a graph break torch would not resume after
    LOOP = "loop"  # a graph break in a for/while loop
    LIMIT = "limit"  # the recompile limit (the variant's recompiles.limit)
    FAILED = "failed"  # the frame's compile failed (its `type`: torch's reason, shortened)


@dataclass(frozen=True)
class Fallback(Model):
    """One frame that fell back to eager, as facts (since issue 53; before, a sentence in
    `fallback_reasons`): its function and file, the kind, the break's line and type."""

    file: str
    kind: FallbackKind
    function: str | None = None
    line: int | None = None
    type: str | None = None


@dataclass(frozen=True)
class BreakCause(Model):
    REQUIRED = ("line",)
    file: str
    reason: str
    line: int | None = None
    function: str | None = None


@dataclass(frozen=True)
class BreakSite(Model):
    REQUIRED = ("line",)
    file: str
    reason: str
    count: int
    line: int | None = None
    function: str | None = None
    origin: str | None = None
    in_repo: bool | None = None
    cause: BreakCause | None = None
    sources: tuple[str, ...] | None = None

    @property
    def in_repository(self) -> bool:
        """In the user's repository: origin "repo" (a document before `origin`: in_repo)."""
        return self.origin == "repo" or (self.origin is None and bool(self.in_repo))


@dataclass(frozen=True)
class GraphBreaks(Model):
    count: int
    sites: tuple[BreakSite, ...]


@dataclass(frozen=True)
class CudaGraphSkip(Model):
    """One reason Inductor gave for running graphs without CUDA graphs, and where."""

    REQUIRED = ("file", "line")
    reason: str
    count: int
    logged: bool
    file: str | None = None
    line: int | None = None
    function: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class CudaGraphs(Model):
    """The CUDA graphs Inductor skipped in a variant that asks for them: how many compiled
    graphs ran without (`skips`) and why."""

    skips: int
    reasons: tuple[CudaGraphSkip, ...]


@dataclass(frozen=True)
class WorstTensor(Model):
    tensor: str
    kind: str
    step: int | None = None
    passed: bool | None = None
    rmse_compiled: float | None = None
    rmse_eager: float | None = None
    cosine: float | None = None
    max_abs_diff: float | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        """The child judges every tensor with each distance, null where it has none
        (child/numerics.py's judge)."""
        return ("passed", "rmse_compiled", "rmse_eager", "cosine", "max_abs_diff")


@dataclass(frozen=True)
class ReferenceDisagreement(Model):
    """The first iteration whose float64 loss was not eager's, as facts (since issue 53's
    last items; before, a sentence in `reference_error`): both losses (a non-finite one as
    "nan", "inf" or "-inf"), and for `differs` the relative difference and what rounding
    allows (report/numerics_words.py words them)."""

    kind: DisagreementKind
    iteration: int
    loss: float | str | None = None
    eager_loss: float | str | None = None
    relative: float | None = None
    allowed: float | None = None


@dataclass(frozen=True)
class Numerics(Model):
    status: NumericsStatus
    # A code (`compared` for a verdict); an older document's sentence.
    reason: NumericsReason | str | None = None
    error: str | None = None  # NumericsReason.ERROR: the exception, as raised
    steps: int | None = None
    dtype: str | None = None
    tol: float | None = None
    checked: tuple[str, ...] | None = None
    failed: tuple[str, ...] | None = None
    reference: str | None = None
    reference_error: str | None = None
    reference_disagreement: ReferenceDisagreement | None = None
    compared_by: ComparedBy | None = None
    cosine_min: float | None = None
    reference_loss_rel_diff: float | None = None
    worst: tuple[WorstTensor, ...] | None = None
    fallback_random: bool | None = None
    reference_from: str | None = None
    compiled_graphs: int | None = None
    compiled_copy_s: float | None = None


@dataclass(frozen=True)
class CompileCounts(Model):
    REQUIRED = (
        "graphs",
        "fx_nodes",
        "guards",
        "generated_kernels",
        "compile_records",
        "backward_compile_records",
    )
    graphs: int | None = None
    fx_nodes: int | None = None
    guards: int | None = None
    generated_kernels: int | None = None
    compile_records: int | None = None
    backward_compile_records: int | None = None


@dataclass(frozen=True)
class ColdSample(Model):
    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class CompileCost(Model):
    REQUIRED = ("wall_s", "cpu_s", "cpu_noise_pct", "warm_wall_s")
    counts: CompileCounts
    cold_samples: tuple[ColdSample, ...]
    wall_s: float | None = None
    cpu_s: float | None = None
    cpu_noise_pct: float | None = None
    warm_wall_s: float | None = None
    cpu_method: str | None = None
    eager_ops: int | None = None
    # The cache-artifacts lever (config cache_artifacts; absent otherwise).
    artifacts_wall_s: float | None = None
    artifacts_bytes: int | None = None
    artifacts_absent: Absence | str | None = None  # str: an older document's sentence
    # torch's compile-time instruction count, first process (child/instruction_counter.py),
    # or why none: absent from documents of releases before it.
    instructions: int | None = None
    instructions_absent: Absence | str | None = None  # str: an older document's sentence
    # The torch release an absence names (it has no counter, no save_cache_artifacts).
    absent_torch: str | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        return ("eager_ops",)  # results/compile_cost.py: null when unknown


@dataclass(frozen=True)
class RegionalBlocks(Model):
    """The repeated blocks regional compilation compiled: the attribute holding them, how
    many, and their class (the model's own names; child/training.py)."""

    name: str
    count: int
    class_name: str


@dataclass(frozen=True)
class RegionalLever(Model):
    """Regional compilation (config `regional`), measured in a process of its own: each block
    of the model's repeated blocks compiled in place, the rest eager (child/training.py), timed
    against eager there. `absent`: why not (nothing repeats, or its process failed)."""

    blocks: RegionalBlocks | str | None = None  # str: an older document's words
    compile_wall_s: float | None = None
    eager_ms: float | None = None
    compiled_ms: float | None = None
    # Its break-even with the 95 % interval (results/payoff.regional_break_even); None:
    # never (not faster than eager) or not measured.
    break_even_steps: BreakEvenInterval | None = None
    # A code: the child's (nothing repeats), or the parent's (its process failed, with
    # `failure` and `error` as a failed variant keeps them; not measured); an older
    # document's sentence, said as recorded.
    absent: Absence | str | None = None
    failure: ChildFailure | None = None
    error: str | None = None


@dataclass(frozen=True)
class RankRecord(Model):
    """One rank of a distributed step's process (child/distributed.py): ok, or its error; where
    DDP split its compiled graphs, its graph breaks and recompiles (None: not counted in that
    process)."""

    rank: int
    status: str
    error: str | None = None
    ddp_splits: int | None = None
    graph_breaks: int | None = None
    recompiles: int | None = None
    compile_s: float | None = None  # its cold compile: window less eager's warm-up
    peak_bytes: int | None = None
    aten_ops: int | None = None  # ATen ops of one compiled step (step work)


@dataclass(frozen=True)
class DistributedRun(Model):
    """How a distributed step ran (config `distributed`) and what its ranks said, from the
    variant's first process: `ddp_splits` is the most splits any rank's DDP optimizer made in
    the compiled model's graphs at gradient-bucket boundaries — expected, never counted as
    graph breaks."""

    wrapper: str
    world_size: int
    backend: str
    ranks: tuple[RankRecord, ...]
    bucket_cap_mb: float | None = None
    ddp_splits: int | None = None
    # After the numerics' compiled steps, every rank's parameters equal (None: not checked).
    ranks_agree: bool | None = None
    # When they were not: the ranks whose parameters differ from rank 0's (None: an older
    # document, whose numerics reason says it).
    ranks_differ: tuple[int, ...] | None = None


@dataclass(frozen=True)
class BreakEvenInterval(Model):
    REQUIRED = ("estimate", "high")
    low: float
    estimate: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class SpeedupEstimate(Model):
    estimate: float
    low: float
    high: float
    estimator: SpeedupEstimator | str  # str: an older document's sentence, as recorded


@dataclass(frozen=True)
class Interval(Model):
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class CompileEstimate(Model):
    estimate: float | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Payoff(Model):
    REQUIRED = (
        "speedup",
        "break_even_steps",
        "warm_break_even_steps",
        "saving_s",
        "processes_needed",
    )
    decision: Decision
    steps_per_run: int
    speedup: SpeedupEstimate | None = None
    break_even_steps: BreakEvenInterval | None = None
    warm_break_even_steps: BreakEvenInterval | None = None
    saving_s: Interval | None = None
    processes_needed: int | None = None
    processes: int | None = None
    compile_s: CompileEstimate | None = None
    # From shipped cache artifacts (config cache_artifacts): absent when not measured.
    artifacts_break_even_steps: BreakEvenInterval | None = None

    def recorded_nulls(self) -> tuple[str, ...]:
        return ("compile_s",)  # results/recommendation.analyse: null when not measured


class FailureCause(str, enum.Enum):
    """Why a variant or a step gave no measurement (run/child_failure.py's causes, as the
    document records them; report/child_failure_words.py says each)."""

    # A child's
    TIMED_OUT = "timed_out"  # its CPU seconds (timeout_s), or timeout_s as wall clock
    WALL_CAP = "wall_cap"  # the wall cap of a child that waited without using CPU
    DEADLINE = "deadline"  # what was left of matrix --timeout-s
    CRASHED = "crashed"  # killed by a signal
    OUT_OF_MEMORY = "out_of_memory"  # its container's memory limit
    PIDS_LIMIT = "pids_limit"  # its container's pids limit
    EXITED = "exited"  # a non-zero exit code
    NOT_STARTED = "not_started"  # its interpreter or container did not start
    NO_RESULT = "no_result"  # it ended without writing its result
    BAD_RESULT = "bad_result"  # it wrote a result the parent refuses or cannot read
    USER_ERROR = "user_error"  # the step raised (its text is the variant's error)
    # The parent's
    LAUNCH_FAILED = "launch_failed"  # compilegate could not run the child (its exception)
    NO_REPORT = "no_report"  # the child ended without a report
    PAIR_INCOMPLETE = "pair_incomplete"  # a paired child did not return both sides
    PAIR_UNREADABLE = "pair_unreadable"  # a paired child's report could not be read
    NOT_RECORDED = "not_recorded"  # recording what was measured raised (its exception)
    NO_FIRST_PROCESS = "no_first_process"  # a timing process with no first to add to
    NOT_FINITE = "not_finite"  # a NaN or an infinity measured
    ARTIFACTS_REFUSED = "artifacts_refused"  # the first process's cache artifacts refused
    NOT_MEASURED = "not_measured"  # no measurement and no cause known
    INTERRUPTED = "interrupted"  # the run was stopped (`signal`) while measuring it
    NOT_RUN = "not_run"  # never measured (figures.why)


class FailureStage(str, enum.Enum):
    """Where a failure happened, when not in a variant's first process."""

    EAGER = "eager"  # the step's eager references
    TIMING_PROCESS = "timing_process"  # a later timing process of the variant
    SUMMARY = "summary"  # the step's summary, once every process reported


@dataclass(frozen=True)
class ChildFailure(Model):
    """Why a variant or a step failed: the cause, the phase its child was in (child/protocol
    .Phase's value; null: it failed before its first progress line or in the parent), and
    since issue 53 every fact its words need (`figures`, written in every record, perhaps
    empty: the cause's own; `stage` with `process` of `processes`; the child's `doing` and
    `last_output`), the text that is not compilegate's kept in the failed object's `error`.
    A record without `figures` (an older document) has its words in `error`, said as
    recorded; a document from before any record, too."""

    REQUIRED = ("phase",)
    cause: FailureCause
    phase: str | None = None
    signal: str | None = None  # a crash's or an interruption's signal name (SIGKILL)
    stage: FailureStage | None = None
    process: int | None = None
    processes: int | None = None
    figures: Mapping[str, Any] | None = None
    doing: str | None = None
    last_output: str | None = None

    @property
    def as_facts(self) -> bool:
        """Recorded with its facts (since issue 53): the report words it from them."""
        return self.figures is not None


@dataclass(frozen=True)
class Variant(Model):
    REQUIRED = ("dynamic", "error")
    id: str
    mode: str
    compile_target: str
    status: Status
    dynamic: bool | None = None
    error: str | None = None
    fullgraph: bool | None = None
    backend: str | None = None
    compile_s: float | None = None
    compile_cost: CompileCost | None = None
    compile_call_s: float | None = None
    compile_phases_s: Mapping[str, float] | None = None
    cache: Mapping[str, Any] | None = None
    warmup_s: tuple[float, ...] | None = None
    eager_warmup_s: tuple[float, ...] | None = None
    step_ms: Timing | None = None
    eager_step_ms: Timing | None = None
    speedup: Ratio | None = None
    aa_ratio: Ratio | None = None
    noise_pct: float | None = None
    detectable_change_pct: float | None = None
    break_even_steps: float | None = None
    peak_bytes: int | None = None
    eager_peak_bytes: int | None = None
    recompiles: Recompiles | None = None
    graph_breaks: GraphBreaks | None = None
    fallbacks_to_eager: int | None = None
    fallback_reasons: tuple[str, ...] | None = None
    # Each fallback as facts (since issue 53): present, the report words the variant's
    # fallbacks and degraded notes from the facts (report/degraded_notes.py).
    fallbacks: tuple[Fallback, ...] | None = None
    cuda_graphs: CudaGraphs | None = None
    numerics: Numerics | None = None
    degraded: tuple[str, ...] | None = None
    # The child's diagnostics pass raised (its exception): the measurement stands, the
    # diagnostics are not there. Before it was recorded, a note in `degraded` said it.
    diagnostics_error: str | None = None
    # Keys of the child's diagnostics refused: they named what was measured (results/
    # document.py). Absent before it was recorded: a note in `degraded` said it.
    refused_diagnostics: tuple[str, ...] | None = None
    yardstick_ms: Timing | None = None
    eager_per_yardstick: Ratio | None = None
    compiled_per_yardstick: Ratio | None = None
    processes: tuple[Process, ...] | None = None
    compiled_process_noise_pct: float | None = None
    speedup_process_noise_pct: float | None = None
    torch_state: TorchState | None = None
    payoff: Payoff | None = None
    late_recompile_s: float | None = None
    step_work: StepWork | None = None
    regional: RegionalLever | None = None
    distributed: DistributedRun | None = None
    failure: ChildFailure | None = None

    def written_as_null(self) -> tuple[str, ...]:
        return (*self.REQUIRED, *MEASURED_WHEN_OK) if self.status is Status.OK else self.REQUIRED

    def recorded_nulls(self) -> tuple[str, ...]:
        return RECORDED_WHEN_OK if self.status is Status.OK else ()

    @property
    def failed(self) -> bool:
        return self.status is Status.ERROR

    @property
    def not_wholly_compiled(self) -> bool:
        """The compile degraded (`compile_degraded`), or its diagnostics are in doubt (they
        failed, or keys were refused)."""
        return self.compile_degraded or bool(self.diagnostics_error or self.refused_diagnostics)

    @property
    def compile_degraded(self) -> bool:
        """Graph breaks in the user's code or a library, a frame that fell back to eager, or
        the recompile limit hit (recorded as facts since issue 53: `fallbacks`); a document
        from before says so in `degraded`."""
        if self.fallbacks is None:
            return bool(self.degraded)
        sites = self.graph_breaks.sites if self.graph_breaks is not None else ()
        return bool(
            self.fallbacks
            or (self.fallbacks_to_eager or 0) > 0
            or any(site.origin in DEGRADING_ORIGINS for site in sites)
            or (self.recompiles is not None and self.recompiles.limit_hit)
        )

    @property
    def definition(self) -> dict[str, Any]:
        """What makes two variants the same compile: mode, dynamic, target, fullgraph,
        backend (an absent key read as torch.compile's default)."""
        return {
            key: default if getattr(self, key) is None else getattr(self, key)
            for key, default in VARIANT_DEFAULTS.items()
        }


class BoundKind(enum.Enum):
    """What bounds one side of a step (results/step_bound.py)."""

    LAUNCH = "launch"  # CUDA: the GPU idles most of the step, waiting for the host's launches
    DEVICE = "device"  # CUDA: the GPU is busy most of the step
    DISPATCH = "dispatch"  # the host's cost per ATen call is most of the step
    MATMUL = "matmul"  # CPU: most of the step in matrix multiplications and convolutions
    ELEMENTWISE = "elementwise"  # CPU: most of it outside matmuls and dispatch: what fuses
    MIXED = "mixed"  # none of these is most of it


@dataclass(frozen=True)
class StepBound(Model):
    """What bounds one side (eager or a variant) of a step: the counts of one steady
    iteration read against its time (results/step_bound.py). Shares are fractions 0–1."""

    REQUIRED = ("aten_ops", "kernels", "dispatch_share", "compute_share")
    side: str
    kind: BoundKind
    device: str
    step_ms: float
    aten_ops: int | None = None
    kernels: int | None = None
    dispatch_share: float | None = None
    compute_share: float | None = None
    compiled_region_calls: int | None = None
    cuda_graph_replays: int | None = None
    compute_top: tuple[tuple[str | float | int, ...], ...] = ()


@dataclass(frozen=True)
class RuledOut(Model):
    """A variant faster than the one recommended, ruled out by its numerics."""

    variant: str
    speedup: float  # its estimate, by the decision's estimator
    numerics: NumericsStatus


@dataclass(frozen=True)
class WithheldDecision(Model):
    """What the measurement decided before run health withheld it (results/recommendation
    .withheld): the decision and, when undecided, the processes it asked for."""

    decision: Decision
    processes_needed: int | None = None


@dataclass(frozen=True)
class Recommendation(Model):
    """The step's decision as facts; when a variant is quoted, its payoff figures too.
    report/decision_words.py words it. `text`: only in documents from before the decision
    was recorded as facts, the sentence they recorded (said as recorded)."""

    variant: str | None = None
    text: str | None = None
    decision: Decision | None = None
    steps_per_run: int | None = None
    speedup: SpeedupEstimate | None = None
    break_even_steps: BreakEvenInterval | None = None
    warm_break_even_steps: BreakEvenInterval | None = None
    saving_s: Interval | None = None
    processes_needed: int | None = None
    processes: int | None = None
    compile_s: CompileEstimate | None = None
    # An older document's `withheld` is the sentence it recorded: truthy all the same.
    withheld: Withheld | str | None = None
    bounds: tuple[StepBound, ...] | None = None
    artifacts_break_even_steps: BreakEvenInterval | None = None
    caveats: tuple[Caveat, ...] | None = None
    ruled_out: RuledOut | None = None
    cold_compiles: int | None = None  # how many cold compiles `compile_s` is made of
    withheld_decision: WithheldDecision | None = None

    def written_as_null(self) -> tuple[str, ...]:
        """A decided recommendation carries the payoff's figures, null where unknown."""
        return PAYOFF_NULLS if self.decision is not None else ()

    def recorded_nulls(self) -> tuple[str, ...]:
        """The run's decision names its variant (null: none) and, when one is quoted, that
        variant's compile seconds, null when not measured (results/recommendation.py)."""
        if self.decision is None:
            return ()
        return ("variant",) if self.variant is None else ("compile_s",)


@dataclass(frozen=True)
class HistoryRun(Model):
    created_at: str | None = None
    config_fingerprint: str | None = None
    eager_step_ms: float | None = None
    eager_step_yardsticks: float | None = None
    eager_step_p25_ms: float | None = None
    eager_step_p25_yardsticks: float | None = None
    variants: Mapping[str, Mapping[str, float | None]] | None = None


@dataclass(frozen=True)
class Step(Model):
    REQUIRED = ("error",)
    name: str
    status: Status
    variants: tuple[Variant, ...]
    error: str | None = None
    entry: str | None = None
    device: str | None = None
    config_fingerprint: str | None = None
    settings: Mapping[str, Any] | None = None
    eager: Eager | None = None
    recommendation: Recommendation | None = None
    process_noise_pct: float | None = None
    history: tuple[HistoryRun, ...] | None = None
    failure: ChildFailure | None = None  # why it failed, as facts (absent: `error` says it)
    # In a baseline: why its step times are not vouched for (recorded from an unsteady run
    # without --force: gate/baseline.py); the speed judges then gate them only on a history.
    unsteady_times: tuple[UnsteadyMark, ...] | None = None

    @property
    def failed(self) -> bool:
        return self.status is Status.ERROR

    def variant(self, vid: str) -> Variant | None:
        return next((v for v in self.variants if v.id == vid), None)


@dataclass(frozen=True)
class ResultDocument(Model):
    schema_version: Any
    tool: Tool
    created_at: str
    environment: Environment
    steps: tuple[Step, ...]
    config: ConfigRef | None = None
    declared_steps: tuple[str, ...] | None = None
    pairing: Pairing | None = None
    run_health: RunHealth | None = None

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def step_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)

    @property
    def failed(self) -> bool:
        """A step or one of its variants ended in an error (`compilegate run`'s exit 3)."""
        return any(s.failed or any(v.failed for v in s.variants) for s in self.steps)

    def recorded_settings(self, key: str) -> dict[str, Any]:
        """Step name → what its settings (an open object) recorded under `key`; None where
        a step recorded nothing there."""
        return {s.name: (s.settings or {}).get(key) for s in self.steps}


# --- the door in ---------------------------------------------------------------------


def parse(raw: Any, source: str, role: str = "result") -> ResultDocument:
    """The document `raw` (parsed JSON) read from `source`, checked and typed. Raise a
    one-line BaselineError naming `source` and the key path of the first problem."""
    check(raw, source, role)
    return _build(ResultDocument, raw)


def check(document: Any, source: str, role: str = "result") -> None:
    """Raise a one-line BaselineError for a non-finite number, a schema violation, or a
    duplicate step name or variant id."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    non_finite = non_finite_paths(document)
    if non_finite:
        where, value = non_finite[0]
        raise BaselineError(
            f"{source}: not a valid compilegate {role} document: at {where}: {value} is not a "
            f"finite number (JSON has no NaN or Infinity){more_found(non_finite)}"
        )
    may_lack = KEYS_OLD_BASELINES_LACK if role == "baseline" else ()
    problems = validation_errors(document, role, may_lack=may_lack) + duplicate_names(document)
    if problems:
        where, _, message = problems[0].partition(": ")
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        if len(problems) >= MAX_ERRORS:  # validation_errors stops counting there
            more = f" (and at least {MAX_ERRORS - 1} more problems)"
        raise BaselineError(
            f"{source}: not a valid compilegate {role} document: at {where}: "
            f"{_one_line(message)}{more}"
        )


def non_finite_paths(document: Any, max_found: int = MAX_ERRORS) -> list[tuple[str, str]]:
    """(key path, `NaN`/`Infinity`/`-Infinity`) of the numbers JSON cannot carry: the first
    `max_found`, in document order (a hostile document holds one a value: 200,000 paths of a
    1 MB key were 200 GB, issue 51). Memory: those paths, each bounded (format_key_path)."""
    found = itertools.islice(_non_finite(document, []), max_found)
    return [(format_key_path(path), token) for path, token in found]


def more_found(found: list[tuple[str, str]], max_found: int = MAX_ERRORS) -> str:
    """` (and 3 more)` of what non_finite_paths found beyond the first; `at least` once it
    stopped counting."""
    if len(found) >= max_found:
        return f" (and at least {max_found - 1} more)"
    return f" (and {len(found) - 1} more)" if len(found) > 1 else ""


def _non_finite(document: Any, path: list[Any]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(document, float) and not math.isfinite(document):
        token = "NaN" if math.isnan(document) else ("Infinity" if document > 0 else "-Infinity")
        yield tuple(path), token
        return
    items: Any = ()
    if isinstance(document, dict):
        items = document.items()
    elif isinstance(document, list):
        items = enumerate(document)
    for key, value in items:
        path.append(key)
        yield from _non_finite(value, path)
        path.pop()


def duplicate_names(document: Any, max_found: int = MAX_ERRORS) -> list[str]:
    """Step names and variant ids must be unique: they are what a comparison matches on.
    The first `max_found` duplicates, each name cut to a line's worth (a name that is not
    a string is the schema's to refuse)."""
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        return []
    return list(itertools.islice(_duplicates(document["steps"]), max_found))


def _duplicates(steps: list[Any]) -> Iterator[str]:
    seen_steps: set[str] = set()
    for index, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        name = step.get("name")
        if isinstance(name, str):
            if name in seen_steps:
                yield f"steps[{index}].name: duplicate step name {_shown(name)}"
            seen_steps.add(name)
        seen_variants: set[str] = set()
        variants = step.get("variants")
        for v_index, variant in enumerate(variants if isinstance(variants, list) else []):
            vid = variant.get("id") if isinstance(variant, dict) else None
            if isinstance(vid, str):
                if vid in seen_variants:
                    yield f"steps[{index}].variants[{v_index}].id: duplicate variant {_shown(vid)}"
                seen_variants.add(vid)


def _shown(name: object) -> str:
    """A name as a message shows it: its repr (one line), cut at MAX_DETAIL_CHARS."""
    return _one_line(repr(name)[: MAX_DETAIL_CHARS + 1])


def _one_line(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= MAX_DETAIL_CHARS else flat[: MAX_DETAIL_CHARS - 1] + "…"


def environment_of(raw: Mapping[str, Any]) -> Environment:
    """The environment of a document already through the door (`check`), typed: for
    gate/baseline.py's merge, which works on the JSON it writes back."""
    return _build(Environment, raw)


def part_of(cls: type[ModelT], raw: Mapping[str, Any]) -> ModelT:
    """One part of a child's report (already checked at the launcher's door,
    child/protocol.py: step work, torch state, numerics), typed as the document's `cls`."""
    return _build(cls, raw)


def with_part(model: ModelT, raw: Mapping[str, Any]) -> ModelT:
    """`model` with the fields a child's JSON part names (a variant's diagnostics), each
    typed by its annotation; keys the model does not name are left behind."""
    changes = _fields_of(type(model), raw)
    return dataclasses.replace(model, **changes)  # type: ignore[type-var]


def _fields_of(cls: type[Model], raw: Mapping[str, Any]) -> dict[str, object]:
    """The fields of `cls` that `raw` names, each typed by its annotation."""
    hints = _hints(cls)
    return {
        item.name: _convert(hints[item.name], raw[item.name])
        for item in dataclasses.fields(cls)  # type: ignore[arg-type]
        if item.name in raw
    }


def step_of(raw: Mapping[str, Any]) -> Step:
    """One step of a document already through the door (`check`), typed: for
    gate/baseline.py's merge, which works on the JSON it writes back."""
    return _build(Step, raw)


ModelT = TypeVar("ModelT", bound=Model)


def _build(cls: type[ModelT], raw: Mapping[str, Any]) -> ModelT:
    """`cls` from a schema-valid mapping: each field from the key of its name, converted by
    its annotation; keys the schema does not name are left behind."""
    return cls(**_fields_of(cls, raw))


def _convert(annotation: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        if annotation == UnsteadyCause:
            return cause_of_json(value)
        if annotation == UnsteadyMark:
            return mark_of_json(value)
        arms = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(arms) == 2 and arms[1] is str and issubclass(arms[0], enum.Enum):
            return _code_or_recorded(arms[0], value)
        if len(arms) == 2 and arms[1] is str and issubclass(arms[0], Model):
            return value if isinstance(value, str) else _build(arms[0], value)  # str: older
        return _convert(arms[0], value) if len(arms) == 1 else value
    if origin is tuple:
        item = typing.get_args(annotation)[0]
        return tuple(_convert(item, v) for v in value)
    if origin is Mapping:
        item = typing.get_args(annotation)[1]
        return types.MappingProxyType({k: _convert(item, v) for k, v in value.items()})
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return _build(annotation, value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return value  # JSON's 3 and 3.0 are one number; kept as written
    return value


def absence_of(value: str) -> Absence | str:
    """A child's absence code read at the parent's door (a regional lever's), or the text an
    older child wrote there, kept as recorded."""
    found = _code_or_recorded(Absence, value)
    return found if isinstance(found, Absence) else value


def _code_or_recorded(codes: type[enum.Enum], value: str) -> enum.Enum | str:
    """A code (a recommendation's `withheld`, a speedup's `estimator`, a ratio's `method`,
    an absence, a numerics reason), or the sentence an older document recorded there, kept
    as recorded."""
    try:
        return codes(value)
    except ValueError:
        return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


__all__ = [
    "ComparedBy",
    "Decision",
    "NumericsStatus",
    "ResultDocument",
    "Status",
    "Step",
    "Variant",
    "check",
    "environment_of",
    "parse",
    "step_of",
]
