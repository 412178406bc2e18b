"""Paired speed rows with too few pairs of processes to judge anything (issue 54, finding 9).

A paired comparison's noise is t(pairs − 1) × the spread of one pair's log ratio over
√pairs: from 2 pairs (variant_processes: 2) one disturbed pair gave ±1660 %, a figure that
means nothing. Below results/stats.MIN_PAIRS pairs a speed row that its noise left undecided
says "too few processes to judge" instead of a ± (a change large enough to be decided
all the same keeps its figures), and the run warns before it measures
(`too_few_pairs_warning`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...gate.judges.speed_facts import SpeedFacts
from ...gate.verdict import MetricVerdict
from ...results.stats import MIN_PAIRS

TOO_FEW = "too few processes to judge"


def too_few_pairs(row: MetricVerdict) -> int | None:
    """The pairs behind a paired speed row its noise left undecided, when fewer than
    MIN_PAIRS; else None."""
    facts = row.facts
    if not isinstance(facts, SpeedFacts) or not facts.paired or facts.processes is None:
        return None
    pairs = facts.processes[0]
    if pairs >= MIN_PAIRS or row.decidable:
        return None
    return pairs


def too_few_words(pairs: int) -> str:
    """`too few processes to judge: 2 pairs (paired speed needs at least 3: …)`."""
    return (
        f"{TOO_FEW}: {pairs} pairs of processes (paired speed needs at least {MIN_PAIRS}: "
        f"variant_processes: {MIN_PAIRS} or more)"
    )


def too_few_pairs_warning(steps: Sequence[tuple[str, int]]) -> str | None:
    """The line a paired run prints before it measures, for (step, variant_processes) of
    the steps that would pair fewer than MIN_PAIRS processes; None when none would."""
    few = [(name, count) for name, count in steps if count < MIN_PAIRS]
    if not few:
        return None
    counts = sorted({count for _, count in few})
    said = " or ".join(f"variant_processes: {count}" for count in counts)
    names = ", ".join(name for name, _ in few)
    return (
        f"warning: paired speed cannot be judged with fewer than {MIN_PAIRS} pairs of "
        f"processes, and {said} ({names}) gives {' or '.join(map(str, counts))}: its "
        f'speed rows will read "{TOO_FEW}"; set variant_processes: {MIN_PAIRS} or more'
    )
