"""What a bisection (`compilegate bisect`) knows, as types: what one commit counted, per step
and subject (eager or a variant), the values it follows (each count by its key: step,
subject, count), the commits it probed and each change it found.

Counts of work (step work, compile work, graph breaks, recompiles, numerics' pass or fail)
are functions of the code, the torch version and the shapes, identical run to run: they need
no timing, so a moved count is bisected over first-parent history with one untimed counting
pass per probed commit (child/measure.py's `counts_only`). The search is
run/bisect_search.py, a probe run/bisect_probe.py, the commits run/bisect_history.py, the
words report/bisect_words.py.

A commit's counts come from a probe's counting children or from a stored result document
(the good end of `bisect --against`), through the same typed parts (results/model.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Union

from .model import (
    CompileCounts,
    GraphBreaks,
    Numerics,
    Recompiles,
    ResultDocument,
    Status,
    StepWork,
)

EAGER = "eager"
# The step-work counts in the order an answer lists them (gate/judges/step_work.py's order).
STEP_WORK_COUNTS = (
    "host_syncs",
    "aten_ops",
    "compiled_region_calls",
    "kernels",
    "cuda_graph_replays",
    "flops",
    "allocations",
    "allocated_bytes",
)
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


@dataclass(frozen=True)
class Commit:
    """One first-parent commit: its full sha and its subject line."""

    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:7]


@dataclass(frozen=True)
class Skipped:
    """A commit whose probe failed, and the one-line reason."""

    reason: str


Probed = Union[CommitCounts, Skipped]
Probe = Callable[[Commit], Probed]


@dataclass(frozen=True)
class ProbeRecord:
    """One probe the search ran: the commit, what it found (or why it was skipped) and its
    wall seconds."""

    commit: Commit
    outcome: Probed
    wall_s: float

    @property
    def skipped(self) -> Skipped | None:
        return self.outcome if isinstance(self.outcome, Skipped) else None


@dataclass(frozen=True)
class Change:
    """A count's value changed from `before` to `after` first at `first` (the commit before
    it, `last_before`, still had `before`); `candidates`: the skipped commits between them,
    when the change could be at any of them or at `first`."""

    key: CountKey
    before: Value
    after: Value
    last_before: Commit
    first: Commit
    counts_before: CommitCounts
    counts_after: CommitCounts
    candidates: tuple[Commit, ...] = ()

    @property
    def pinned(self) -> bool:
        """Whether one commit is named (no skipped commit could hold the change instead)."""
        return not self.candidates
