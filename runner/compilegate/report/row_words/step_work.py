"""The words of a step-work row (gate/judges/step_work.py): the counts that decided it,
each with the names (and `.item()` sites) that moved it, the others that moved, and what
was not gated."""

from __future__ import annotations

from ...gate.judges.step_work import (
    ZERO_TOLERANCE,
    CountChange,
    StepWorkFacts,
    StepWorkJudgement,
    weight,
)
from ...gate.verdict import MetricVerdict, Verdict
from .compile_cost import REFRESH
from .moved_counts import MovedCount, MovedWithinTolerance, may_need_a_look, within_tolerance
from .rules import threshold_words
from .sentence import RowSentence
from .worded import WordedRow

# A count's name in a sentence (gate/judges/step_work.py COUNTS).
COUNT_NAMES = {
    "host_syncs": "host syncs",
    "aten_ops": "ATen ops",
    "compiled_region_calls": "compiled-region calls",
    "kernels": "kernels",
    "cuda_graph_replays": "CUDA-graph replays",
    "flops": "FLOPs",
    "allocations": "allocations",
    "allocated_bytes": "allocated bytes",
}
# Names (or sites) said per count, the rest counted; counts named in full per row.
NAMES_SHOWN = 3
NAMED_COUNTS = 2
# The counts judged across torch versions, in the order a sentence names them.
_ACROSS_ORDER = ("aten_ops", "flops", "host_syncs")
# Every step-work sentence opens with it: `step work: …`.
LEAD = "step work"
_NOT_JUDGED = {
    StepWorkJudgement.NOT_COUNTED: "not counted in this run",
    StepWorkJudgement.BASELINE_PREDATES: (
        f"the baseline predates it, nothing to judge this run's against; {REFRESH}"
    ),
    StepWorkJudgement.NO_COMMON_COUNT: "no count taken on both sides",
}


def step_work_said(row: MetricVerdict, facts: StepWorkFacts) -> WordedRow:
    """The row's sentence (`step work` its lead), and the judged counts that moved while it
    passed (moved_counts.py)."""
    return WordedRow(RowSentence(LEAD, _said(row, facts)), look=_moved_within_tolerance(row, facts))


def _moved_within_tolerance(
    row: MetricVerdict, facts: StepWorkFacts
) -> MovedWithinTolerance | None:
    if not may_need_a_look(row) or facts.judged is not StepWorkJudgement.JUDGED:
        return None
    moved = [
        MovedCount(COUNT_NAMES[c.key], c.before, c.after)
        for c in facts.changes
        if c.moved and c.key in facts.judged_counts
    ]
    return within_tolerance(moved, facts.tolerance_pct)


def _said(row: MetricVerdict, facts: StepWorkFacts) -> str:
    """What a step-work row says after its lead."""
    if facts.judged is not StepWorkJudgement.JUDGED:
        return _NOT_JUDGED[facts.judged]
    tolerance_pct = facts.tolerance_pct or 0.0
    verdict = row.verdict
    past = [c for c in facts.changes if c.key in facts.past_tolerance]
    moved = [c for c in facts.changes if c.moved]
    if verdict is Verdict.REGRESSION:
        why = _why(past, tolerance_pct, "grew")
    elif verdict is Verdict.IMPROVEMENT:
        why = _why(past, tolerance_pct, "fell")
    elif any(c.key in facts.judged_counts for c in moved):
        why = threshold_words(Verdict.PASS, tolerance_pct, "tolerance")
    else:
        why = "reported"
    # The counts that decided the verdict, named; the others that moved, by name only (a
    # graph break moves half the counts of a compiled step: the row says what failed first).
    deciding = sorted(past, key=weight, reverse=True)[:NAMED_COUNTS] or moved
    if verdict is Verdict.PASS:
        # exact counts: every judged count that moved is said with its change, even within
        # the tolerance (issue 54, finding 4); the others that moved are named after them
        deciding = [c for c in moved if c.key in facts.judged_counts] or moved
    listing = "; ".join(describe(c) for c in deciding)
    others = [COUNT_NAMES[c.key] for c in moved if c not in deciding]
    message = f"{listing}: {why}" if listing else "every count as in the baseline"
    if others:
        message += f"; also moved: {', '.join(others)}"
    if facts.one_sided:
        message += "; counted on one side only: " + ", ".join(
            COUNT_NAMES[k] for k in facts.one_sided
        )
    if facts.autotuned:
        message += (
            "; ATen ops and FLOPs not gated under max-autotune: autotuning times ATen "
            "matmuls against generated templates and may pick another between runs"
        )
    if facts.across_torch is not None:
        judged = [COUNT_NAMES[k] for k in _ACROSS_ORDER if k in facts.across_torch]
        message += (
            f"; across torch versions only {_and(judged)} are judged: each version's "
            "compiler, launches and allocator work their own way"
        )
    return message


def describe(change: CountChange) -> str:
    """`host syncs 0 → 1 (+1 aten::_local_scalar_dense at model.py:106)`."""
    text = f"{COUNT_NAMES[change.key]} {change.before:,} → {change.after:,}"
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


def _why(changed: list[CountChange], tolerance_pct: float, moved: str) -> str:
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
        parts.append(f"{moved} by more than the {tolerance_pct:g} % tolerance (counted, not timed)")
    return "; ".join(parts)


def _and(names: list[str]) -> str:
    """`ATen ops, FLOPs and host syncs`."""
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)
