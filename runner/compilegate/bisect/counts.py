"""What one commit counted, per step and subject (eager or a variant), and the values a
bisection follows: each count by its key (step, subject, count).

Built from a probe's counting children (probe.py) or from a stored result document (the good
end of `bisect --against`), through the same typed parts (results/model.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

from ..gate.judges.step_work import COUNTS as STEP_WORK_COUNTS
from ..results.model import (
    CompileCounts,
    GraphBreaks,
    Numerics,
    Recompiles,
    ResultDocument,
    Status,
    StepWork,
)

EAGER = "eager"
COMPILE_WORK_COUNTS = CompileCounts.REQUIRED
# Every count a bisection can follow, by name (--count), in the order its answer lists them.
COUNT_NAMES = (*STEP_WORK_COUNTS, *COMPILE_WORK_COUNTS, "graph_breaks", "recompiles", "numerics")
Value = Union[int, str, None]  # a count, or numerics' status


@dataclass(frozen=True)
class SubjectCounts:
    """One subject's counts at one commit: eager has step work only."""

    step_work: StepWork | None = None
    compile_counts: CompileCounts | None = None
    graph_breaks: GraphBreaks | None = None
    recompiles: Recompiles | None = None
    numerics: Numerics | None = None

    def value(self, count: str) -> Value:
        """The count named `count` (COUNT_NAMES), None where this subject has none."""
        if count in STEP_WORK_COUNTS:
            return self.step_work.count(count) if self.step_work is not None else None
        if count in COMPILE_WORK_COUNTS:
            counts = self.compile_counts
            return getattr(counts, count) if counts is not None else None
        if count == "graph_breaks":
            return self.graph_breaks.count if self.graph_breaks is not None else None
        if count == "recompiles":
            return self.recompiles.count if self.recompiles is not None else None
        if count == "numerics":
            return self.numerics.status.value if self.numerics is not None else None
        raise KeyError(count)


@dataclass(frozen=True, order=True)
class CountKey:
    """One followed count: a step's subject (eager or a variant id) and the count's name."""

    step: str
    subject: str
    count: str


@dataclass(frozen=True)
class CommitCounts:
    """What one commit counted: step name → subject → its counts."""

    steps: Mapping[str, Mapping[str, SubjectCounts]]

    def subject(self, key: CountKey) -> SubjectCounts | None:
        return self.steps.get(key.step, {}).get(key.subject)

    def value(self, key: CountKey) -> Value:
        found = self.subject(key)
        return found.value(key.count) if found is not None else None

    def keys(self) -> list[CountKey]:
        """Every count this commit has a value for."""
        return [
            CountKey(step, subject, count)
            for step, subjects in self.steps.items()
            for subject, counts in subjects.items()
            for count in COUNT_NAMES
            if counts.value(count) is not None
        ]


def moved_keys(
    good: CommitCounts, bad: CommitCounts, counts: tuple[str, ...] = ()
) -> list[CountKey]:
    """The counts both ends took whose values differ (only those named in `counts`, when
    given), in step, subject and COUNT_NAMES order."""
    wanted = set(counts or COUNT_NAMES)
    both = set(good.keys()) & set(bad.keys())
    moved = [k for k in both if k.count in wanted and good.value(k) != bad.value(k)]
    order = {name: i for i, name in enumerate(COUNT_NAMES)}
    return sorted(moved, key=lambda k: (k.step, k.subject != EAGER, k.subject, order[k.count]))


def counts_of_document(document: ResultDocument) -> CommitCounts:
    """The counts a stored result (a baseline) recorded, as a probe would have counted them:
    eager's step work, each measured variant's step work, compile counts, breaks, recompiles
    and numerics (a failed step or variant has none)."""
    steps: dict[str, dict[str, SubjectCounts]] = {}
    for step in document.steps:
        if step.status is not Status.OK:
            continue
        subjects: dict[str, SubjectCounts] = {}
        if step.eager is not None:
            subjects[EAGER] = SubjectCounts(step_work=step.eager.step_work)
        for variant in step.variants:
            if variant.failed:
                continue
            cost = variant.compile_cost
            subjects[variant.id] = SubjectCounts(
                step_work=variant.step_work,
                compile_counts=cost.counts if cost is not None else None,
                graph_breaks=variant.graph_breaks,
                recompiles=variant.recompiles,
                numerics=variant.numerics,
            )
        steps[step.name] = subjects
    return CommitCounts(steps)
