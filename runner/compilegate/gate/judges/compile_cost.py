"""Compile cost, three ways, each judged by what it can be trusted for.

    metric         what                                   judged
    compile_work   torch's own counts: graphs, FX nodes,  growth of any count beyond
                   guards, generated kernels, forward     compile_work_growth_pct (and by
                   and backward compile records           at least 1): regression, whatever
                                                          the load; a drop: improvement.
                                                          FX nodes, guards and kernels per
                                                          eager op of the compiled region
    compile_cpu_s  CPU seconds of the compiling process   the noise rule: beyond
                   and its compile workers                compile_cpu_time_growth_pct and
                                                          beyond the noise of both runs'
                                                          cold compiles pooled
    compile_       instructions of the first process's    growth beyond
    instructions   compile (torch's counter, where the    compile_instructions_growth_pct:
                   machine has a hardware one)            regression, across torch versions
                                                          too; a side without a count: the
                                                          row says why, not judged
    compile_s      wall seconds of the cold compile       only where the baseline's policy
                                                          says gate_compile_wall_time: true
                                                          (a dedicated runner); else
                                                          reported, never a failure

Compile work is judged against the size of what was compiled (issue 31): FX nodes, guards
and generated kernels grow with the model, so where both runs counted the ATen ops of one
eager call of the compiled region (`compile_cost.eager_ops`, child/compile_size.py) they are
judged per op: a regression needs that ratio beyond the tolerance *and* the raw count up.
A pull request that adds a layer then passes, while the same model compiling into more
graphs (counted raw), guards or kernels per op fails. A document without `eager_ops` (from
before it) is judged on the raw counts, as before.

Why: on a shared 2-core runner, two busy neighbours made a cold compile's wall time ×3.4
and its CPU time ×1.23 (single runs: ×1.04 to ×1.45), while the counts were identical in
every run (shared/reference/compile-time-measurement.md §7). Hence the defaults: 5 % for the
counts, 50 % for the CPU seconds (above what load alone moved them; a dedicated runner's
baseline may lower it), and a run with one cold compile a side, which has no noise
estimate, is at worst `inconclusive` on CPU seconds.

Not judged, and said so in the row:
- counts across torch versions (an upgrade): what torch counts as a guard or a kernel is
  the version's own, so the counts are reported beside each other (`gated` false); the
  CPU seconds still judge the upgrade's compile cost;
- generated kernels under max-autotune modes: autotuning may pick another kernel mix;
- CPU seconds of a side that compiled from a shared, warm Inductor cache (--inductor-cache:
  no cold samples): a warm compile is not a cold one;
- a baseline that predates compile cost (no `compile_cost`): the counts and CPU seconds
  are `new` (nothing to compare with; exit 0) and the row says to refresh the baseline.
  A run that lacks them while its baseline has them is `missing` (exit 4), as for any
  gated metric. Wall time of such an old baseline excluded the `torch.compile()` call and
  the backward compile, so it is shown, not gated.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from ...results.model import Absence, CompileCost, CompileCounts, Variant
from ...results.processes import geometric_mean
from ...results.stats import compare_sides
from ..row_facts_base import RowFactsBase
from ..rules import (
    Side,
    classify_speed_change,
    combined_noise_pct,
    detectable_change_pct,
    is_number,
    missing,
    threshold_verdict,
)
from ..verdict import MetricVerdict, Verdict
from .sides import Sides

COMPILE_TIME_FLOOR_S = 1.0
# torch's compile-work counts, in the order a row lists them (report/row_words/compile_cost.py
# names them).
COUNTS = CompileCounts.REQUIRED
# Counts that grow with the compiled region's size: judged per eager op where both sides
# measured it (compile_cost.eager_ops). Graphs and compile records are not: one more layer
# compiles into the same graphs.
SIZED_COUNTS = ("fx_nodes", "guards", "generated_kernels")


# -- facts ------------------------------------------------------------------------------------


class WallJudgement(str, Enum):
    """How a compile's wall time was judged."""

    NOT_GATED = "not_gated"  # the baseline's policy does not gate_compile_wall_time
    UNDER_FLOOR = "under_floor"  # moved less than COMPILE_TIME_FLOOR_S: ignored
    THRESHOLD = "threshold"  # no noise estimate: on the threshold alone
    NOISE_RULE = "noise_rule"  # against the noise of both runs' cold compiles


@dataclass(frozen=True)
class CompileWallFacts(RowFactsBase):
    """Wall seconds of the cold compile, each side, and how they were judged. `change_pct`
    is of the larger of the baseline's seconds and `floor_s`."""

    kind: ClassVar[str] = "compile_wall"
    base_s: float
    cur_s: float
    change_pct: float
    judged: WallJudgement
    threshold_pct: float
    floor_s: float = COMPILE_TIME_FLOOR_S
    noise_pct: float | None = None


class CpuJudgement(str, Enum):
    """How a compile's CPU seconds were judged, or why not."""

    BASELINE_PREDATES = "baseline_predates"  # `new`: refresh the baseline to gate it
    WARM_CACHE = "warm_cache"  # a side compiled from a shared, warm Inductor cache
    NO_NOISE_ESTIMATE = "no_noise_estimate"  # one cold compile a side: threshold alone
    NOISE_RULE = "noise_rule"


@dataclass(frozen=True)
class CompileCpuFacts(RowFactsBase):
    """CPU seconds of the compiling process and its workers: this run's, the baseline's
    (None when it predates them), their change, and how they were judged. Judged, they are
    the geometric means of each side's cold compiles, `cold_compiles` of them a side (pairs
    of processes when `paired`); `warm_sides` are the sides that had no cold compile."""

    kind: ClassVar[str] = "compile_cpu"
    judged: CpuJudgement
    cur_s: float
    base_s: float | None = None
    change_pct: float | None = None
    threshold_pct: float | None = None
    noise_pct: float | None = None
    cold_compiles: tuple[int, int] | None = None
    paired: bool = False
    warm_sides: tuple[Side, ...] = ()


@dataclass(frozen=True)
class CountChange:
    """One compile-work count of both sides (a key of COUNTS) and its change in percent:
    per eager op for SIZED_COUNTS when both sides measured the compiled region's size
    (`per_op` then holds both ratios), else of the raw count."""

    name: str
    before: int
    after: int
    change_pct: float
    per_op: tuple[float, float] | None = None


class UngatedWhy(str, Enum):
    """Why compile-work counts are reported and not judged."""

    ACROSS_TORCH = "not_gated_across_torch"  # each torch version counts its own way
    AUTOTUNING = "not_gated_autotuning"  # max-autotune may pick another kernel mix


@dataclass(frozen=True)
class UngatedCounts:
    """Counts (keys of COUNTS; empty: every count) reported and not judged, and why."""

    why: UngatedWhy
    names: tuple[str, ...] = ()


class WorkJudgement(str, Enum):
    """Whether compile-work counts were judged, or why not."""

    NOT_MEASURED = "not_measured"  # `missing`: this run lacks them (`unmeasured`: which)
    BASELINE_PREDATES = "baseline_predates"  # `new`: refresh the baseline to gate them
    JUDGED = "judged"


@dataclass(frozen=True)
class CompileWorkFacts(RowFactsBase):
    """Compile-work counts: every count both sides took (COUNTS' order), the tolerance
    they were judged against, the compiled region's size in ATen ops of one eager call
    (`eager_ops`: baseline, this run; None unless both measured it), the counts not judged
    and why (`torch_versions`: baseline's, this run's, when they differ), and, for a row
    that is `missing`, the counts the baseline took and this run did not (empty: all)."""

    kind: ClassVar[str] = "compile_work"
    judged: WorkJudgement
    changes: tuple[CountChange, ...] = ()
    tolerance_pct: float | None = None
    eager_ops: tuple[int, int] | None = None
    ungated: tuple[UngatedCounts, ...] = ()
    torch_versions: tuple[str, str] | None = None
    unmeasured: tuple[str, ...] = ()


class InstructionsJudgement(str, Enum):
    """Whether the compile's instruction counts were judged, or why not."""

    JUDGED = "judged"
    NOT_COUNTED = "not_counted"  # this run has no count: `absent` says why (no counter)
    BASELINE_LACKS = "baseline_lacks"  # `new`: the baseline's machine or release had none


@dataclass(frozen=True)
class CompileInstructionsFacts(RowFactsBase):
    """Instructions the first process's compile executed (torch's compile-time instruction
    counter), each side that counted them, their change, and how they were judged; `absent`:
    why this run (NOT_COUNTED) or the baseline (BASELINE_LACKS) has no count (a code, or an
    older document's sentence), and the torch release it names (`absent_torch`)."""

    kind: ClassVar[str] = "compile_instructions"
    judged: InstructionsJudgement
    base: int | None = None
    cur: int | None = None
    change_pct: float | None = None
    threshold_pct: float | None = None
    absent: Absence | str | None = None
    absent_torch: str | None = None


def judge(sides: Sides) -> list[MetricVerdict]:
    if not isinstance(sides.base, Variant) or not isinstance(sides.head, Variant):
        return []  # eager compiles nothing
    rows = [
        judge_wall_time(sides),
        judge_work(sides),
        judge_cpu_time(sides),
        judge_instructions(sides),
    ]
    return [row for row in rows if row is not None]


def _absent(cost: CompileCost | None) -> tuple[Absence | str | None, str | None]:
    """Why a side counted no instructions, and the torch release that names."""
    if cost is None:
        return None, None
    return cost.instructions_absent, cost.absent_torch


def judge_instructions(sides: Sides) -> MetricVerdict | None:
    """The compile's instruction count against the baseline's: nothing when neither side
    counted (most virtual machines); a side without one is said, not judged (a machine's
    missing counter is no regression); else growth beyond the tolerance is a regression,
    across torch versions too (like the CPU seconds: the upgrade's compile cost)."""
    subject = sides.subject
    base, cur = _variants(sides)
    base_cost, cur_cost = base.compile_cost, cur.compile_cost
    before = base_cost.instructions if base_cost is not None else None
    after = cur_cost.instructions if cur_cost is not None else None
    if before is None and after is None:
        return None
    metric, unit = "compile_instructions", "count"
    if after is None:
        why, torch = _absent(cur_cost)
        facts = CompileInstructionsFacts(
            InstructionsJudgement.NOT_COUNTED, before, absent=why, absent_torch=torch
        )
        return subject.row(metric, Verdict.PASS, unit=unit, gated=False, facts=facts)
    if before is None:
        why, torch = _absent(base_cost)
        facts = CompileInstructionsFacts(
            InstructionsJudgement.BASELINE_LACKS, cur=after, absent=why, absent_torch=torch
        )
        return subject.row(metric, Verdict.NEW, unit=unit, gated=False, facts=facts)
    threshold_pct = sides.policy.thresholds["compile_instructions_growth_pct"]
    change_pct = (after - before) / max(before, 1) * 100
    verdict = threshold_verdict(change_pct, threshold_pct)
    facts = CompileInstructionsFacts(
        InstructionsJudgement.JUDGED, before, after, change_pct, threshold_pct
    )
    return subject.measured(
        metric,
        verdict,
        (before, after),
        unit,
        change_pct,
        threshold_pct,
        change_unit="pct",
        facts=facts,
    )


def _variants(sides: Sides) -> tuple[Variant, Variant]:
    base, head = sides.pair
    assert isinstance(base, Variant) and isinstance(head, Variant)  # judge() checked
    return base, head


# -- wall seconds -----------------------------------------------------------------------------


def judge_wall_time(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_s, cur_s = base.compile_s, cur.compile_s
    unjudged = missing(subject, "compile_s", base_s, cur_s)
    if unjudged is not None or base_s is None or cur_s is None:
        return unjudged
    threshold_pct = sides.policy.thresholds["compile_time_growth_pct"]
    growth_s = cur_s - base_s
    change_pct = growth_s / max(base_s, COMPILE_TIME_FLOOR_S) * 100
    values = (base_s, cur_s)
    if not sides.policy.gate_compile_wall_time:
        facts = CompileWallFacts(base_s, cur_s, change_pct, WallJudgement.NOT_GATED, threshold_pct)
        return subject.measured(
            "compile_s",
            Verdict.PASS,
            values,
            "s",
            change_pct,
            threshold_pct,
            gated=False,
            facts=facts,
        )
    noise = _pooled_noise_pct(sides, "wall_s")
    if abs(growth_s) < COMPILE_TIME_FLOOR_S:
        verdict, judged = Verdict.PASS, WallJudgement.UNDER_FLOOR
    else:
        verdict = Verdict(classify_speed_change(change_pct, threshold_pct, noise))
        judged = WallJudgement.THRESHOLD if noise is None else WallJudgement.NOISE_RULE
    facts = CompileWallFacts(base_s, cur_s, change_pct, judged, threshold_pct, noise_pct=noise)
    return subject.measured(
        "compile_s",
        verdict,
        values,
        "s",
        change_pct,
        threshold_pct,
        noise_pct=noise,
        facts=facts,
    )


# -- work counts ------------------------------------------------------------------------------


def judge_work(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_cost, cur_cost = base.compile_cost, cur.compile_cost
    if base_cost is None and cur_cost is None:
        return None
    if cur_cost is None:
        facts = CompileWorkFacts(WorkJudgement.NOT_MEASURED)
        return subject.row("compile_work", Verdict.MISSING, facts=facts)
    if base_cost is None:
        facts = CompileWorkFacts(WorkJudgement.BASELINE_PREDATES)
        return subject.row("compile_work", Verdict.NEW, unit="count", gated=False, facts=facts)
    base_counts, cur_counts = base_cost.counts, cur_cost.counts
    threshold_pct = sides.policy.thresholds["compile_work_growth_pct"]
    ungated = _ungated_counts(sides)
    across_torch = any(u.why is UngatedWhy.ACROSS_TORCH for u in ungated)
    not_judged = {name for u in ungated for name in u.names}
    sizes = compiled_sizes(base_cost, cur_cost)
    changes: list[CountChange] = []
    unmeasured = []
    for name in COUNTS:
        before, after = getattr(base_counts, name), getattr(cur_counts, name)
        if not _is_count(before):
            continue  # the baseline's torch does not count it: nothing to hold this run to
        if not _is_count(after):
            unmeasured.append(name)
            continue
        changes.append(count_change(name, before, after, sizes))
    if unmeasured and not across_torch:
        facts = CompileWorkFacts(WorkJudgement.NOT_MEASURED, unmeasured=tuple(unmeasured))
        return subject.row("compile_work", Verdict.MISSING, facts=facts)
    if not changes:
        return None
    gated = [c for c in changes if c.name not in not_judged and not across_torch]
    # A regression needs the (per-op) count beyond the tolerance and the raw count up; an
    # improvement, the reverse: a smaller model is not less work per op.
    grown = [c for c in gated if c.change_pct > threshold_pct and c.after - c.before >= 1]
    shrunk = [c for c in gated if -c.change_pct > threshold_pct and c.before - c.after >= 1]
    if grown:
        verdict, worst = Verdict.REGRESSION, max(grown, key=_order)
    elif shrunk:
        verdict, worst = Verdict.IMPROVEMENT, min(shrunk, key=_order)
    else:
        # The count that moved most; unchanged, the graph's size (FX nodes) speaks for all.
        verdict = Verdict.PASS
        worst = max(changes, key=lambda c: (abs(c.change_pct), c.name == "fx_nodes"))
    facts = CompileWorkFacts(
        WorkJudgement.JUDGED,
        tuple(changes),
        threshold_pct,
        sizes,
        ungated,
        sides.units.torch_versions if across_torch else None,
    )
    return subject.measured(
        "compile_work",
        verdict,
        (worst.before, worst.after),
        "count",
        worst.change_pct,
        threshold_pct,
        change_unit="pct",
        gated=not (ungated and not gated),
        facts=facts,
    )


def _order(change: CountChange) -> tuple[float, str, int, int]:
    """The order the largest change is picked in: by change, then name, then values."""
    return change.change_pct, change.name, change.before, change.after


def compiled_sizes(base_cost: CompileCost, cur_cost: CompileCost) -> tuple[int, int] | None:
    """(baseline, current) `eager_ops`, the compiled region's size; None unless both sides
    measured it (an older document: the counts are then judged raw)."""
    before, after = base_cost.eager_ops, cur_cost.eager_ops
    if _is_count(before) and _is_count(after) and before > 0 and after > 0:
        return before, after
    return None


def count_change(name: str, before: int, after: int, sizes: tuple[int, int] | None) -> CountChange:
    """The count's change: per eager op for the counts that grow with the model's size
    (SIZED_COUNTS) when both sizes are known, else of the raw count."""
    if sizes is None or name not in SIZED_COUNTS:
        return CountChange(name, before, after, (after - before) / max(before, 1) * 100)
    per_op_before, per_op_after = before / sizes[0], after / sizes[1]
    if per_op_before == 0:
        change_pct = (after - before) / 1 * 100  # from nothing: as a raw count
    else:
        change_pct = (per_op_after - per_op_before) / per_op_before * 100
    return CountChange(name, before, after, change_pct, (per_op_before, per_op_after))


def _ungated_counts(sides: Sides) -> tuple[UngatedCounts, ...]:
    """Counts reported but not judged, and why (across torch versions: all of them)."""
    ungated = []
    if not sides.units.same_torch:
        ungated.append(UngatedCounts(UngatedWhy.ACROSS_TORCH))
    if _variants(sides)[1].mode.startswith("max-autotune"):
        ungated.append(UngatedCounts(UngatedWhy.AUTOTUNING, ("generated_kernels",)))
    return tuple(ungated)


# -- CPU seconds ------------------------------------------------------------------------------


def judge_cpu_time(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_cost, cur_cost = base.compile_cost, cur.compile_cost
    if base_cost is None and cur_cost is None:
        return None
    base_s = base_cost.cpu_s if base_cost is not None else None
    cur_s = cur_cost.cpu_s if cur_cost is not None else None
    if base_cost is None and is_number(cur_s):
        facts = CompileCpuFacts(CpuJudgement.BASELINE_PREDATES, cur_s)
        return subject.row(
            "compile_cpu_s",
            Verdict.NEW,
            unit="s",
            current=cur_s,
            gated=False,
            facts=facts,
        )
    unjudged = missing(subject, "compile_cpu_s", base_s, cur_s, positive=True)
    if unjudged is not None or base_s is None or cur_s is None:
        return unjudged
    assert base_cost is not None and cur_cost is not None  # both have cpu_s
    threshold_pct = sides.policy.thresholds["compile_cpu_time_growth_pct"]
    warm = tuple(
        side
        for side, cost in ((Side.BASELINE, base_cost), (Side.RUN, cur_cost))
        if not cost.cold_samples
    )
    if warm:
        change_pct = (cur_s - base_s) / base_s * 100
        facts = CompileCpuFacts(
            CpuJudgement.WARM_CACHE,
            cur_s,
            base_s,
            change_pct,
            threshold_pct,
            warm_sides=warm,
        )
        return subject.measured(
            "compile_cpu_s",
            Verdict.PASS,
            (base_s, cur_s),
            "s",
            change_pct,
            threshold_pct,
            gated=False,
            facts=facts,
        )
    samples = (_cold(base_cost, "cpu_s") or [base_s], _cold(cur_cost, "cpu_s") or [cur_s])
    comparison = compare_sides(*samples, paired=sides.paired)
    noise = comparison.noise_pct
    if noise is None:
        noise = combined_noise_pct(base_cost.cpu_noise_pct, cur_cost.cpu_noise_pct)
    change_pct = comparison.change_pct
    # The values are the ones the change is computed from: the geometric mean of each
    # side's cold compiles (on torch < 2.5 every process compiles cold, not only the first).
    base_s, cur_s = geometric_mean(samples[0]), geometric_mean(samples[1])
    verdict = Verdict(classify_speed_change(change_pct, threshold_pct, noise))
    if noise is None and verdict is Verdict.REGRESSION:
        # One cold compile a side gives no noise estimate, and CPU time moves with the load.
        verdict = Verdict.INCONCLUSIVE
    judged = CpuJudgement.NO_NOISE_ESTIMATE if noise is None else CpuJudgement.NOISE_RULE
    facts = CompileCpuFacts(
        judged,
        cur_s,
        base_s,
        change_pct,
        threshold_pct,
        noise,
        comparison.processes,
        comparison.paired,
    )
    return subject.measured(
        "compile_cpu_s",
        verdict,
        (base_s, cur_s),
        "s",
        change_pct,
        threshold_pct,
        noise_pct=noise,
        detectable_change_pct=detectable_change_pct(noise, threshold_pct),
        facts=facts,
    )


def _pooled_noise_pct(sides: Sides, key: str) -> float | None:
    base_variant, cur_variant = _variants(sides)
    base = _cold(base_variant.compile_cost, key)
    cur = _cold(cur_variant.compile_cost, key)
    if not base or not cur or len(base) + len(cur) < 3:
        return None
    return compare_sides(base, cur, paired=sides.paired).noise_pct


def _cold(cost: CompileCost | None, key: str) -> list[float]:
    values = [getattr(s, key) for s in (cost.cold_samples if cost is not None else ())]
    return [float(v) for v in values if is_number(v) and v > 0]


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
