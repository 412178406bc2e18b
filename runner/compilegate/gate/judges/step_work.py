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

from ...results.model import StepWork, StepWorkCounts, Variant
from ..verdict import MetricVerdict
from .sides import Sides

METRIC = "step_work"
COUNTS = {
    "host_syncs": "host syncs",
    "aten_ops": "ATen ops",
    "compiled_region_calls": "compiled-region calls",
    "kernels": "kernels",
    "cuda_graph_replays": "CUDA-graph replays",
    "flops": "FLOPs",
    "allocations": "allocations",
    "allocated_bytes": "allocated bytes",
}
ZERO_TOLERANCE = frozenset({"host_syncs"})
# Judged across torch versions too: what the user's code computes and where it waits; for
# eager also the ATen ops it dispatches (a small MLP's were the same on torch 2.4.1 and 2.13),
# while what compiled code leaves to ATen is each version's compiler's choice.
ACROSS_VERSIONS = frozenset({"flops", "host_syncs"})
ACROSS_VERSIONS_EAGER = ACROSS_VERSIONS | {"aten_ops"}
# Under max-autotune a GPU run picks an ATen matmul or a generated template by timing them,
# so how much work stays in ATen may differ between runs (found exact on the CPU only).
AUTOTUNED = frozenset({"aten_ops", "flops"})
NAMES_SHOWN = 3
NAMED_COUNTS = 2
REFRESH = "refresh the baseline on the default branch to gate it"


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


def judge(sides: Sides) -> list[MetricVerdict]:
    row = judge_step_work(sides)
    return [row] if row is not None else []


def judge_step_work(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = sides.base.step_work, sides.head.step_work
    if base is None and cur is None:
        return None
    if cur is None:
        return subject.row(METRIC, "missing", "step work: not counted in this run")
    if base is None:
        return subject.row(
            METRIC,
            "new",
            f"step work: the baseline predates it, nothing to judge this run's against; {REFRESH}",
            unit="count",
            gated=False,
        )
    threshold_pct = sides.policy.thresholds["step_work_growth_pct"]
    changes = count_changes(base, cur)
    if not changes:
        return subject.row(
            METRIC, "pass", "step work: no count taken on both sides", unit="count", gated=False
        )
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
    moved = [c for c in changes if c.after != c.before]
    if grown:
        verdict, worst = "regression", max(grown, key=_weight)
        why = _why(grown, threshold_pct, "grew")
    elif shrunk:
        verdict, worst = "improvement", max(shrunk, key=_weight)
        why = _why(shrunk, threshold_pct, "fell")
    else:
        verdict = "pass"
        worst = max(changes, key=lambda c: (abs(c.change_pct), c.key == "aten_ops"))
        judged_moved = [c for c in moved if c in gated]
        why = f"within the {threshold_pct:g} % tolerance" if judged_moved else "reported"
    # The counts that decided the verdict, named; the others that moved, by name only (a
    # graph break moves half the counts of a compiled step: the row says what failed first).
    deciding = sorted(grown or shrunk, key=_weight, reverse=True)[:NAMED_COUNTS] or moved
    listing = "; ".join(describe(c) for c in deciding)
    others = [COUNTS[c.key] for c in moved if c not in deciding]
    message = (
        f"step work: {listing}: {why}" if listing else "step work: every count as in the baseline"
    )
    if others:
        message += f"; also moved: {', '.join(others)}"
    # Counts one side took and the other not (a count both lack, such as kernels on the
    # CPU, is the device's, and said in the result's own step_work.absent).
    one_sided = sorted(set(base.absent) ^ set(cur.absent))
    if one_sided:
        message += "; counted on one side only: " + ", ".join(COUNTS[k] for k in one_sided)
    if autotuned:
        message += (
            "; ATen ops and FLOPs not gated under max-autotune: autotuning times ATen "
            "matmuls against generated templates and may pick another between runs"
        )
    if not same_torch:
        judged = (
            "ATen ops, FLOPs and host syncs"
            if across is ACROSS_VERSIONS_EAGER
            else ("FLOPs and host syncs")
        )
        message += (
            f"; across torch versions only {judged} are judged: each version's compiler, "
            "launches and allocator work their own way"
        )
    # A host sync is said as a count (`+1`, limit `+0`), the rest as a percent change.
    by_count = worst.key in ZERO_TOLERANCE
    return subject.measured(
        METRIC,
        verdict,
        message,
        (worst.before, worst.after),
        "count",
        worst.after - worst.before if by_count else worst.change_pct,
        0.0 if by_count else threshold_pct,
        change_unit="count" if by_count else "pct",
        gated=bool(gated),
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


def describe(change: CountChange) -> str:
    """`host syncs 0 → 1 (+1 aten::_local_scalar_dense at model.py:106)`."""
    text = f"{COUNTS[change.key]} {change.before:,} → {change.after:,}"
    shown = [f"{delta:+,} {name}" for name, delta in change.named[:NAMES_SHOWN]]
    if len(change.named) > NAMES_SHOWN:
        shown.append(f"{len(change.named) - NAMES_SHOWN} more")
    if change.sites:
        at = ", ".join(f"{site} {delta:+,}" for site, delta in change.sites[:NAMES_SHOWN])
        more = len(change.sites) - NAMES_SHOWN
        at += f", {more} more" if more > 0 else ""
        if len(shown) == 1 and len(change.sites) == 1:
            shown = [f"{shown[0]} at {change.sites[0][0]}"]
        else:
            shown.append(f".item() at {at}")
    return f"{text} ({', '.join(shown)})" if shown else text


def _grew(change: CountChange, threshold_pct: float) -> bool:
    if change.key in ZERO_TOLERANCE:
        return change.after > change.before
    return change.change_pct > threshold_pct and change.after - change.before >= 1


def _shrank(change: CountChange, threshold_pct: float) -> bool:
    if change.key in ZERO_TOLERANCE:
        return change.after < change.before
    return -change.change_pct > threshold_pct and change.before - change.after >= 1


def _weight(change: CountChange) -> tuple[bool, float]:
    """A host sync first (it fails on its own), then the largest change."""
    return change.key in ZERO_TOLERANCE, abs(change.change_pct)


def _why(changed: list[CountChange], threshold_pct: float, moved: str) -> str:
    syncs = [c for c in changed if c.key in ZERO_TOLERANCE]
    others = [c for c in changed if c.key not in ZERO_TOLERANCE]
    parts = []
    if syncs:
        parts.append(
            f"host syncs {moved}: none may be added per step"
            if moved == "grew"
            else "fewer host syncs per step"
        )
    if others:
        parts.append(f"{moved} by more than the {threshold_pct:g} % tolerance (counted, not timed)")
    return "; ".join(parts)
