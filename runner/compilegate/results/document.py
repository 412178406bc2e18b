"""Assemble the result document (schemas/result.schema.json) from what the children measured.

Pure functions from what a child reported (each process's part typed at the door,
process_report.py; its diagnostics and numerics JSON) to typed entries (results/model.py):
the eager references, a variant, a later process, a step's summary (the statistics are in
stats.py, the decision in recommendation.py); the step as measured so far is a
results/step_record.StepRecord. Plus the atomic writer: the parent writes the document
after every step, so a crash or a failing later phase loses nothing already measured.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import __version__
from ..config import StepConfig
from ..config import Variant as VariantConfig
from ..config.model import DEFAULT_ACCEPT_LABEL, DEFAULT_STEPS_PER_RUN
from ..schemas import MAX_ERRORS
from .compile_cost import (
    FRESH,
    REUSED,
    CacheArtifacts,
    ProcessCompile,
    compile_cost,
    process_compile,
    with_instructions,
)
from .model import (
    Absence,
    ChildFailure,
    CompileCounts,
    ConfigRef,
    Eager,
    Environment,
    Model,
    Numerics,
    Pairing,
    Process,
    Ratio,
    RegionalLever,
    RunHealth,
    Step,
    Timing,
    Tool,
    Variant,
    absence_of,
    non_finite_paths,
    with_part,
)
from .payoff import measure, regional_break_even
from .process_report import ProcessReport, ProcessReportError
from .processes import (
    all_timed_yardstick,
    compiled_values,
    eager_values,
    process_record,
    speedup_values,
    step_processes,
    variant_processes,
)
from .recommendation import analyse, recommend
from .stats import break_even_steps, process_noise_pct, ratio_of_medians, summarize
from .step_bound import step_bounds
from .step_record import StepRecord, StepSummary, variant_skeleton

SCHEMA_VERSION = 1
THIS_TOOL = Tool(name="compilegate", version=__version__)
# What a child reported beside its processes' measurements (its `diagnostics`,
# child/protocol.py's ChildReport): JSON, checked at the launcher's door and typed by the
# document's classes as it is merged (a key that clashes with a measurement is refused:
# _merge_diagnostics). A process's own measurement and the numerics are typed at the door
# (process_report.py).
ChildJson = Mapping[str, Any]


@dataclass(frozen=True)
class DocumentHead:
    """What a side's document records beside its steps: the tool, when, the config (its
    `accept_label`: gate/acceptance.py reads it from the base side only), every step the
    config declares (`declared_steps`, also those left out with --step, so the gate can tell
    a step not selected from a step removed) and the environment it was measured in."""

    environment: Environment
    config: ConfigRef
    declared_steps: tuple[str, ...]
    created_at: str
    tool: Tool = THIS_TOOL
    schema_version: int = SCHEMA_VERSION

    def to_json(
        self,
        steps: Sequence[Mapping[str, Any]] = (),
        pairing: Pairing | None = None,
        run_health: RunHealth | None = None,
    ) -> dict[str, Any]:
        """The result document with these steps (StepRecord.to_json), this side's pairing
        and its run health: the door out, as schemas/result.schema.json gives it."""
        out: dict[str, Any] = {
            "schema_version": self.schema_version,
            "tool": self.tool.to_json(),
            "created_at": self.created_at,
            "config": self.config.to_json(),
            "declared_steps": list(self.declared_steps),
            "environment": self.environment.to_json(as_recorded=True),
            "steps": list(steps),
        }
        if pairing is not None:
            out["pairing"] = pairing.to_json()
        if run_health is not None:
            out["run_health"] = run_health.to_json(as_recorded=True)
        return out


def new_document(
    environment: Environment,
    config_path: str,
    config_sha256: str,
    declared_steps: Sequence[str] = (),
    accept_label: str | None = DEFAULT_ACCEPT_LABEL,
) -> DocumentHead:
    """The document's head, created now (DocumentHead)."""
    return DocumentHead(
        environment=environment,
        config=ConfigRef(path=config_path, sha256=config_sha256, accept_label=accept_label),
        declared_steps=tuple(declared_steps),
        created_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    )


IN_PROCESS_ORDER = "base and head interleaved in the rounds of one process"


def pairing_entry(
    pairing_id: str, role: str, base_label: str, head_label: str, mode: str = "processes"
) -> Pairing:
    """The `pairing` entry of each side's document in a paired run (gate/pairing.py reads it):
    one id for the run, this side's role (`base` or `head`), how the sides are named, and
    how they were measured: `processes` (each process one side, alternating A B B A) or
    `in-process` (each timing process both sides, in the same rounds; cold compiles still
    one side per process)."""
    return Pairing(
        id=pairing_id,
        role=role,
        base_label=base_label,
        head_label=head_label,
        mode=mode,
        order=IN_PROCESS_ORDER if mode == "in-process" else "A B B A",
    )


def step_skeleton(step: StepConfig) -> dict[str, Any]:
    """A step not measured yet, as the document records it."""
    return StepRecord(step).to_json()


def eager_entry(measured: ProcessReport) -> Eager:
    """The eager references' entry from the first eager process (`measured`: the child's
    `eager`, typed at the door)."""
    a, b = measured.side("eager"), measured.side("eager_b")
    aa = ratio_of_medians(a.samples_ms, a.rounds, b.samples_ms, b.rounds)
    return Eager(
        step_ms=summarize(a.samples_ms, a.rounds),
        warmup_s=required(measured.warmup_s, "warmup_s"),
        peak_bytes=measured.peak_bytes,
        aa_ratio=aa.ratio,
        noise_pct=aa.distance_from_one_pct,
        yardstick_ms=yardstick_timing(measured),
        per_yardstick=per_yardstick(measured, "eager"),
        processes=(process_record(measured),),
        torch_state=measured.torch_state,
        step_work=measured.step_work,
    )


def with_process(
    eager: Eager, measured: ProcessReport, head_vs_base: Mapping[str, float] | None
) -> Eager:
    """The eager entry with one more eager reference's process record (`head_vs_base`: the
    ratio of a process that timed base and head together)."""
    record = (eager_entry(measured).processes or ())[0]  # eager_entry records its process
    processes = (*(eager.processes or ()), _with_ratio(record, head_vs_base))
    return replace(eager, processes=processes)


def with_head_vs_base(eager: Eager, head_vs_base: Mapping[str, float] | None) -> Eager:
    """The first eager process with the ratio of base and head timed in it, when they were."""
    if head_vs_base is None or not eager.processes:
        return eager
    first, *rest = eager.processes
    return replace(eager, processes=(_with_ratio(first, head_vs_base), *rest))


def _with_ratio(process: Process, head_vs_base: Mapping[str, float] | None) -> Process:
    if head_vs_base is None:
        return process
    return replace(process, head_vs_base=MappingProxyType(dict(head_vs_base)))


def add_process(
    entry: Variant,
    measured: ProcessReport,
    cache_dir: str = REUSED,
    head_vs_base: Mapping[str, float] | None = None,
) -> Variant:
    """A variant's later, timing-only process: the entry with one more record of its timing
    and compile (`cache_dir`: compile_cost.FRESH, REUSED or SHARED; `head_vs_base`: the
    ratio of a process that timed base and head together); the compile cost pooled again."""
    if entry.compile_cost is None or entry.processes is None:
        raise ValueError(f"variant {entry.id}: no first process to add a timing process to")
    record = _compile_of(measured, cache_dir).on(process_record(measured))
    processes = (*entry.processes, _with_ratio(record, head_vs_base))
    cost = entry.compile_cost
    pooled = compile_cost(
        processes, cost.counts, cost.cpu_method, cost.eager_ops, CacheArtifacts.kept(cost)
    )
    pooled = replace(
        pooled,
        instructions=cost.instructions,
        instructions_absent=cost.instructions_absent,
        absent_torch=cost.absent_torch,
    )
    return replace(entry, processes=processes, compile_cost=pooled)


def with_regional(
    entry: Variant, measured: ProcessReport | None, failed: tuple[str, ChildFailure] | None
) -> Variant:
    """The variant with its regional-compilation lever (model.RegionalLever) from the
    process that compiled only the repeated blocks: its compile window and mean step times,
    or why there are none (`failed`: its process failed, as (error, failure record) the way a
    failed variant keeps them; the child's `regional_absent`)."""
    if failed is not None:
        error, kept = failed
        lever = RegionalLever(absent=Absence.PROCESS_FAILED, failure=kept, error=error[:500])
        return replace(entry, regional=lever)
    if measured is None:
        return replace(entry, regional=RegionalLever(absent=Absence.NOT_MEASURED))
    if measured.regional_absent is not None:
        absent = absence_of(measured.regional_absent)  # the child's code
        return replace(entry, regional=RegionalLever(absent=absent))
    record = _compile_of(measured, FRESH).on(process_record(measured))
    eager, compiled = measured.side("eager"), measured.side("compiled")
    blocks = measured.compile.blocks
    wall = record.compile_wall_s
    found = (
        regional_break_even(
            entry, (eager.samples_ms, eager.rounds), (compiled.samples_ms, compiled.rounds), wall
        )
        if wall is not None
        else None
    )
    lever = RegionalLever(
        blocks=blocks,
        compile_wall_s=wall,
        eager_ms=statistics.fmean(eager.samples_ms) if eager.samples_ms else None,
        compiled_ms=statistics.fmean(compiled.samples_ms) if compiled.samples_ms else None,
        break_even_steps=found,
    )
    return replace(entry, regional=lever)


def yardstick_timing(measured: ProcessReport) -> Timing | None:
    """The yardstick's own timing (child/timing.py), when the child timed it."""
    stick = measured.timed.get("yardstick")
    return summarize(stick.samples_ms, stick.rounds) if stick is not None else None


def per_yardstick(measured: ProcessReport, side: str) -> Ratio | None:
    """The time of `side` (eager, compiled) in yardstick units, when the child timed it."""
    stick = measured.timed.get("yardstick")
    if stick is None:
        return None
    own = measured.side(side)
    return ratio_of_medians(own.samples_ms, own.rounds, stick.samples_ms, stick.rounds).ratio


# What the run records of every variant it measured, also when null: the child's
# diagnostics may not overwrite them (with the yardstick's ratios and the step work when
# measured: _merge_diagnostics).
RECORDED = (
    "id",
    "mode",
    "dynamic",
    "compile_target",
    "fullgraph",
    "backend",
    "status",
    "error",
    "compile_s",
    "compile_cost",
    "compile_call_s",
    "late_recompile_s",
    "warmup_s",
    "eager_warmup_s",
    "step_ms",
    "eager_step_ms",
    "speedup",
    "aa_ratio",
    "noise_pct",
    "detectable_change_pct",
    "break_even_steps",
    "peak_bytes",
    "eager_peak_bytes",
    "processes",
    "torch_state",
    "regional",
    "distributed",
)


def variant_entry(
    variant: VariantConfig,
    measured: ProcessReport,
    diagnostics: ChildJson | None = None,
    numerics: Numerics | None = None,
    cache_dir: str = FRESH,
) -> Variant:
    """A measured variant: timings, speedup with CI, noise, compile cost, diagnostics, from
    its first process (`measured`, `numerics`: typed at the door, process_report.py;
    `diagnostics`: the child's JSON; `cache_dir`: how its Inductor cache came to it,
    compile_cost.py), typed."""
    eager, eager_b = measured.side("eager"), measured.side("eager_b")
    compiled = measured.side("compiled")
    speedup = ratio_of_medians(eager.samples_ms, eager.rounds, compiled.samples_ms, compiled.rounds)
    aa = ratio_of_medians(eager.samples_ms, eager.rounds, eager_b.samples_ms, eager_b.rounds)
    step_ms = summarize(compiled.samples_ms, compiled.rounds)
    eager_ms = summarize(eager.samples_ms, eager.rounds)
    first = _compile_of(measured, cache_dir).on(process_record(measured))
    late_recompile_s = measured.late_recompile_s  # config epoch: charged to this process
    if late_recompile_s and first.compile_wall_s is not None:
        first = replace(first, compile_wall_s=first.compile_wall_s + late_recompile_s)
    record = measured.compile
    cost = compile_cost(
        [first],
        record.counts or CompileCounts(),
        record.cpu_method,
        record.eager_ops,
        record.artifacts,
    )
    cost = with_instructions(cost, record.instructions)
    noise_pct = aa.distance_from_one_pct
    entry = replace(
        variant_skeleton(variant),
        compile_s=cost.wall_s,
        compile_cost=cost,
        compile_call_s=record.call_s,
        late_recompile_s=late_recompile_s,
        warmup_s=required(measured.warmup_s, "warmup_s"),
        eager_warmup_s=required(measured.eager_warmup_s, "eager_warmup_s"),
        step_ms=step_ms,
        eager_step_ms=eager_ms,
        speedup=speedup.ratio,
        aa_ratio=aa.ratio,
        noise_pct=noise_pct,
        detectable_change_pct=max(noise_pct, speedup.half_width_pct),
        break_even_steps=break_even_steps(cost.wall_s, eager_ms.median, step_ms.median),
        peak_bytes=measured.peak_bytes,
        eager_peak_bytes=measured.eager_peak_bytes,
        yardstick_ms=yardstick_timing(measured),
        eager_per_yardstick=per_yardstick(measured, "eager"),
        compiled_per_yardstick=per_yardstick(measured, "compiled"),
        processes=(first,),
        torch_state=measured.torch_state,
        step_work=measured.step_work,
        distributed=measured.distributed,
    )
    entry = _merge_diagnostics(entry, diagnostics or {})
    if numerics is not None:
        entry = replace(entry, numerics=numerics)
    return entry


def _merge_diagnostics(entry: Variant, diagnostics: ChildJson) -> Variant:
    """Add the child's diagnostics without letting them overwrite anything measured: they are
    built in the process that ran the user's code, so a key that clashes with a timing, the
    speedup or the status is refused, and its name recorded in `refused_diagnostics` (the
    variant then counts as not wholly compiled; report/degraded_words.py says it)."""
    recorded = {
        *RECORDED,
        "refused_diagnostics",
        *(f.name for f in fields(entry) if getattr(entry, f.name) is not None),
    }
    clashes = sorted(key for key in diagnostics if key in recorded)
    added = {key: value for key, value in diagnostics.items() if key not in recorded}
    if clashes:
        degraded = diagnostics.get("degraded")
        if isinstance(degraded, list):  # the child's own reasons stand beside the refusal
            added["degraded"] = degraded
        added["refused_diagnostics"] = clashes
    return with_part(entry, added)


def finish_step(step: Step) -> StepSummary:
    """Once every process of a step has reported: the noise its processes' spread gives a
    comparison with an identical run (gate/judges/speed.py pools both runs' instead), each
    variant's payoff against the run length (payoff.py; its `break_even_steps` becomes that
    estimate, from every process's mean step times), and the recommendation."""
    records = step_processes(step)
    per_yardstick = all_timed_yardstick(records)
    process_noise = process_noise_pct(eager_values(records, per_yardstick=per_yardstick))
    steps = (step.settings or {}).get("steps_per_run") or DEFAULT_STEPS_PER_RUN
    variants = []
    for variant in step.variants:
        if variant.failed:
            variants.append(variant)
            continue
        mine = variant_processes(variant)
        summed = replace(
            variant,
            compiled_process_noise_pct=process_noise_pct(
                compiled_values(mine, per_yardstick=all_timed_yardstick(mine))
            ),
            speedup_process_noise_pct=process_noise_pct(speedup_values(mine)),
        )
        measured = measure(variant)
        if measured is not None:
            payoff = analyse(measured, steps)
            found = payoff.break_even_steps
            summed = replace(
                summed,
                payoff=payoff,
                break_even_steps=found.estimate if found is not None else None,
            )
        variants.append(summed)
    recommendation = recommend(step.variants, steps)  # as measured: it analyses them itself
    bounds = step_bounds(step)
    if bounds:
        recommendation = replace(recommendation, bounds=tuple(bounds))
    return StepSummary(process_noise, tuple(variants), recommendation)


def write_document(document: dict[str, Any], path: Path) -> None:
    """Write JSON atomically: a temp file in the same folder, then os.replace.

    Only standard JSON: a NaN or Infinity (which json.dump would write as a bare `NaN`
    token that other readers reject) is a ValueError naming its key path, raised before
    anything is written, so the file keeps its previous content. The run turns such
    values into a visible failure of that step or variant before writing
    (run/child_failure.not_finite).
    """
    found = non_finite_paths(document)
    if found:
        where, value = found[0]
        raise ValueError(f"{path}: not written: {value} at {where} is not a finite number")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a result is an ordinary file
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, allow_nan=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class NonFinite:
    """The first value that is not a finite number (NaN, Infinity) and its key, and how
    many more were found (`at_least`: counting stopped at MAX_ERRORS)."""

    value: str
    key: str
    more: int
    at_least: bool


def non_finite_found(entry: Model | ProcessReport, prefix: str = "") -> NonFinite | None:
    """Where the entry holds a NaN or an infinity, as facts; None when all is finite."""
    if isinstance(entry, ProcessReport):
        found = list(entry.non_finite)
    else:
        found = non_finite_paths(entry.to_json())
    if not found:
        return None
    key, value = found[0]
    at_least = len(found) >= MAX_ERRORS
    more = MAX_ERRORS - 1 if at_least else len(found) - 1
    return NonFinite(value, f"{prefix}{key}", more, at_least)


def _compile_of(measured: ProcessReport, cache_dir: str) -> ProcessCompile:
    """The process's compile fields (compile_cost.process_compile) from its typed part."""
    return process_compile(measured.compile, cache_dir, measured.warmup_s, measured.eager_warmup_s)


def required(values: tuple[float, ...] | None, key: str) -> tuple[float, ...]:
    """A list the record needs of a process's part; ProcessReportError when it lacks it."""
    if values is None:
        raise ProcessReportError(f"{key}: not reported by this process")
    return values
