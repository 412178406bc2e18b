"""Step work: what one iteration of the step does, counted, judged from the first stored run.

The step-work pass (child/step_work.py) counts one steady iteration of eager and of each
compiled variant: ATen ops dispatched outside compiled code, compiled-region calls, kernels
and CUDA-graph replays (CUDA), host–device synchronisations, FLOPs, allocations and their
bytes. For fixed shapes these are functions of the code, the torch version and the shapes,
not of the machine: identical in two processes and two runs under two busy loops
(docs/numbers.md). So, the twin of compile work, they are judged against one stored run
whatever the load:

    count                  judged
    host_syncs             any increase is a regression on its own (+0 allowed, like graph
                           breaks): a new `.item()` per step stalls the device every step
    every other count      growth beyond step_work_growth_pct and by at least one: regression;
                           a fall beyond it: improvement

Not judged, and said so in the row:
- a count one side could not take (absent with its reason: kernels on the CPU, a pass that
  failed): the other counts are judged;
- across torch versions (an upgrade): FLOPs and host syncs are the user's arithmetic and
  code, judged, and eager's ATen ops too; what compiled code leaves to ATen, launches and
  allocates is each version's own, so the other counts are reported side by side;
- a baseline from before the pass (no `step_work`): `new`, nothing to judge against;
- ATen ops and FLOPs of a max-autotune variant: autotuning picks an ATen matmul or a
  generated template by timing them, so what stays in ATen may differ between GPU runs.

The row names what changed, by name: the names whose count grew (or fell), largest change
first, so "+1 host sync" comes with `aten::_local_scalar_dense` and "+10 ATen ops" with
`aten::mm +8`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ...results.model import StepWork, StepWorkCounts, Variant
from ..row_facts_base import RowFactsBase
from ..verdict import MetricVerdict, Verdict
from .sides import Sides

METRIC = "step_work"
# The counts, in the order a row lists them (report/row_words/step_work.py names them).
COUNTS = (
    "host_syncs",
    "aten_ops",
    "compiled_region_calls",
    "kernels",
    "cuda_graph_replays",
    "flops",
    "allocations",
    "allocated_bytes",
)
ZERO_TOLERANCE = frozenset({"host_syncs"})
# Judged across torch versions too: what the user's code computes and where it waits; for
# eager also the ATen ops it dispatches (a small MLP's were the same on torch 2.4.1 and 2.13),
# while what compiled code leaves to ATen is each version's compiler's choice.
ACROSS_VERSIONS = frozenset({"flops", "host_syncs"})
ACROSS_VERSIONS_EAGER = ACROSS_VERSIONS | {"aten_ops"}
# Under max-autotune a GPU run picks an ATen matmul or a generated template by timing them,
# so how much work stays in ATen may differ between runs (found exact on the CPU only).
AUTOTUNED = frozenset({"aten_ops", "flops"})


@dataclass(frozen=True)
class CountChange:
    """One count of both sides: its change, and the names that moved it."""

    key: str
    before: int
    after: int
    named: tuple[tuple[str, int], ...]  # (name, change), largest change first
    # host syncs: (file:line, change) where eager's `.item()` calls moved, largest first
    sites: tuple[tuple[str, int], ...] = ()

    @property
    def change_pct(self) -> float:
        return (self.after - self.before) / max(self.before, 1) * 100

    @property
    def moved(self) -> bool:
        return self.after != self.before


class StepWorkJudgement(str, Enum):
    """Whether the step's work was judged, or why not."""

    NOT_COUNTED = "not_counted"  # `missing`: this run did not count it
    BASELINE_PREDATES = "baseline_predates"  # `new`: refresh the baseline to gate it
    NO_COMMON_COUNT = "no_common_count"  # no count taken on both sides
    JUDGED = "judged"


@dataclass(frozen=True)
class StepWorkFacts(RowFactsBase):
    """One iteration's work on both sides: every count both took (COUNTS' order, each with
    the names and `.item()` sites that moved it); which were judged (`judged_counts`) and,
    of those, which crossed the tolerance the way the verdict went (`past_tolerance`:
    grew for a regression, fell for an improvement); the counts one side took and the
    other not; what was not gated: `autotuned` (ATen ops and FLOPs of a max-autotune
    variant), `across_torch` (on two torch versions: the counts still judged then)."""

    kind: ClassVar[str] = "step_work"
    judged: StepWorkJudgement
    changes: tuple[CountChange, ...] = ()
    judged_counts: tuple[str, ...] = ()
    past_tolerance: tuple[str, ...] = ()
    tolerance_pct: float | None = None
    one_sided: tuple[str, ...] = ()
    autotuned: bool = False
    across_torch: tuple[str, ...] | None = None


def judge(sides: Sides) -> list[MetricVerdict]:
    row = judge_step_work(sides)
    return [row] if row is not None else []


def judge_step_work(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = sides.base.step_work, sides.head.step_work
    if base is None and cur is None:
        return None
    if cur is None:
        facts = StepWorkFacts(StepWorkJudgement.NOT_COUNTED)
        return subject.row(METRIC, Verdict.MISSING, facts=facts)
    if base is None:
        facts = StepWorkFacts(StepWorkJudgement.BASELINE_PREDATES)
        return subject.row(METRIC, Verdict.NEW, unit="count", gated=False, facts=facts)
    threshold_pct = sides.policy.thresholds["step_work_growth_pct"]
    changes = count_changes(base, cur)
    if not changes:
        facts = StepWorkFacts(StepWorkJudgement.NO_COMMON_COUNT)
        return subject.row(METRIC, Verdict.PASS, unit="count", gated=False, facts=facts)
    same_torch = sides.units.same_torch
    autotuned = _autotuned(sides)
    across = ACROSS_VERSIONS_EAGER if sides.subject.variant == "eager" else ACROSS_VERSIONS
    gated = [
        c
        for c in changes
        if (same_torch or c.key in across) and not (autotuned and c.key in AUTOTUNED)
    ]
    grown = [c for c in gated if _grew(c, threshold_pct)]
    shrunk = [c for c in gated if _shrank(c, threshold_pct)]
    if grown:
        verdict, worst = Verdict.REGRESSION, max(grown, key=weight)
    elif shrunk:
        verdict, worst = Verdict.IMPROVEMENT, max(shrunk, key=weight)
    else:
        verdict = Verdict.PASS
        worst = max(changes, key=lambda c: (abs(c.change_pct), c.key == "aten_ops"))
    # Counts one side took and the other not (a count both lack, such as kernels on the
    # CPU, is the device's, and said in the result's own step_work.absent).
    one_sided = sorted(set(base.absent) ^ set(cur.absent))
    facts = StepWorkFacts(
        StepWorkJudgement.JUDGED,
        tuple(changes),
        tuple(c.key for c in gated),
        tuple(c.key for c in grown or shrunk),
        threshold_pct,
        tuple(one_sided),
        autotuned,
        None if same_torch else tuple(key for key in COUNTS if key in across),
    )
    # A host sync is said as a count (`+1`, limit `+0`), the rest as a percent change.
    by_count = worst.key in ZERO_TOLERANCE
    return subject.measured(
        METRIC,
        verdict,
        (worst.before, worst.after),
        "count",
        worst.after - worst.before if by_count else worst.change_pct,
        0.0 if by_count else threshold_pct,
        change_unit="count" if by_count else "pct",
        gated=bool(gated),
        facts=facts,
    )


def _autotuned(sides: Sides) -> bool:
    return any(
        isinstance(side, Variant) and side.mode.startswith("max-autotune") for side in sides.pair
    )


def count_changes(base: StepWork, cur: StepWork) -> list[CountChange]:
    """Every count both sides took, in COUNTS' order, with the names that moved it."""
    changes = []
    for key in COUNTS:
        if key not in StepWorkCounts.REQUIRED:
            continue
        before, after = base.count(key), cur.count(key)
        if before is None or after is None:
            continue
        sites = site_changes(base, cur) if key == "host_syncs" else ()
        changes.append(CountChange(key, before, after, named_changes(base, cur, key), sites))
    return changes


def site_changes(base: StepWork, cur: StepWork) -> tuple[tuple[str, int], ...]:
    """(file:line, change) of every `.item()` site whose calls differ, largest first; ()
    unless both sides recorded their sites (eager, from this version of the pass on)."""
    if base.sync_sites is None or cur.sync_sites is None:
        return ()
    return _moved(base.sites(), cur.sites())


def named_changes(base: StepWork, cur: StepWork, key: str) -> tuple[tuple[str, int], ...]:
    """(name, change) of every name whose count differs between the sides, largest first."""
    return _moved(base.named(key), cur.named(key))


def _moved(before: dict[str, int], after: dict[str, int]) -> tuple[tuple[str, int], ...]:
    moved = [
        (name, after.get(name, 0) - before.get(name, 0))
        for name in sorted(set(before) | set(after))
        if after.get(name, 0) != before.get(name, 0)
    ]
    return tuple(sorted(moved, key=lambda item: (-abs(item[1]), item[0])))


def _grew(change: CountChange, threshold_pct: float) -> bool:
    if change.key in ZERO_TOLERANCE:
        return change.after > change.before
    return change.change_pct > threshold_pct and change.after - change.before >= 1


def _shrank(change: CountChange, threshold_pct: float) -> bool:
    if change.key in ZERO_TOLERANCE:
        return change.after < change.before
    return -change.change_pct > threshold_pct and change.before - change.after >= 1


def weight(change: CountChange) -> tuple[bool, float]:
    """A host sync first (it fails on its own), then the largest change."""
    return change.key in ZERO_TOLERANCE, abs(change.change_pct)
