"""Why a measuring child gave no report, or the parent could not record one, as a value:
what the launchers (run/launcher.py, containers/child_launcher.py) found, typed where they
found it, and the parent's own failures (a child it could not run, a measurement it could
not record, a run interrupted), never a sentence read back.

A cause carries its own figures (the budget a child passed, the signal that ended it, the
exit code and last line); `ChildFailure` adds the phase the child was in (the phase field of
its last progress line, child/protocol.Phase), that line's message, the child's last line of
output and where in the step it failed. The words for each are report/child_failure_words
.py's; the document records every fact (results/model.ChildFailure: the cause's `figures`)
and keeps in `error` only the text that is not compilegate's (`ChildFailure.not_ours`);
`failure_of` reads a record back into these values for the words.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from ..child.protocol import Phase
from ..results.document import non_finite_found
from ..results.model import ChildFailure as FailureRecord
from ..results.model import FailureCause, FailureStage, Model
from ..results.process_report import ProcessReport
from .child_budget import BudgetPassed, ChildBudget


@dataclass(frozen=True)
class TimedOut:
    """Past its budget: `passed.limit` "cpu" (its CPU seconds, `counted` saying how they
    were counted: run/descendant_cpu.counting) or "wall-only" (no CPU time readable:
    timeout_s was a wall-clock limit)."""

    code: ClassVar[FailureCause] = FailureCause.TIMED_OUT
    passed: BudgetPassed
    counted: str | None = None


@dataclass(frozen=True)
class WallCapPassed:
    """Past the wall cap: a child that waited without using CPU (run/child_budget.py)."""

    code: ClassVar[FailureCause] = FailureCause.WALL_CAP
    passed: BudgetPassed


@dataclass(frozen=True)
class DeadlineRanOut:
    """What was left of one limit shared by many children (matrix --timeout-s) ran out:
    the child was stopped (`started`) or never started."""

    code: ClassVar[FailureCause] = FailureCause.DEADLINE
    limit_s: float
    started: bool = True


@dataclass(frozen=True)
class Crashed:
    """Ended by a signal."""

    code: ClassVar[FailureCause] = FailureCause.CRASHED
    signal_name: str
    signal_number: int


@dataclass(frozen=True)
class Exited:
    """Ended with a non-zero exit code; `last_line` is its last line of output ("" none)."""

    code: ClassVar[FailureCause] = FailureCause.EXITED
    exit_code: int
    last_line: str = ""


@dataclass(frozen=True)
class OutOfMemory:
    """Killed by its container's memory limit (config limits.memory_mib)."""

    code: ClassVar[FailureCause] = FailureCause.OUT_OF_MEMORY
    limit_mib: int


@dataclass(frozen=True)
class PidsLimit:
    """Its container's pids limit refused forks (config limits.pids)."""

    code: ClassVar[FailureCause] = FailureCause.PIDS_LIMIT
    pids: int
    refused: int


@dataclass(frozen=True)
class NotStarted:
    """Its interpreter (`program`, the OS's `reason`) or its container (`program` None,
    the engine's `reason`) did not start."""

    code: ClassVar[FailureCause] = FailureCause.NOT_STARTED
    program: str | None
    reason: str


@dataclass(frozen=True)
class NoResult:
    """It ended without writing its result."""

    code: ClassVar[FailureCause] = FailureCause.NO_RESULT


@dataclass(frozen=True)
class BadResult:
    """It wrote a result the parent will not read: `how` is "refused" (over a limit of
    bounded_json.py, `detail` says which), "unreadable" (`detail`: the exception's type),
    "unparsable" (not a report: `detail` the first problem), "collected" (the container's
    output folder: `detail` what collect.py refused) or "over" (that folder over its
    limits.output_mib: `detail` says how, containers/limits.output_over)."""

    code: ClassVar[FailureCause] = FailureCause.BAD_RESULT
    how: str
    detail: str


@dataclass(frozen=True)
class UserError:
    """The child reported an error: the step raised, or its definition or device is wrong;
    `text` is the child's own (the user's error with what the child was doing)."""

    code: ClassVar[FailureCause] = FailureCause.USER_ERROR
    text: str


@dataclass(frozen=True)
class LaunchFailed:
    """The parent could not run the child: `text`, its exception in one line."""

    code: ClassVar[FailureCause] = FailureCause.LAUNCH_FAILED
    text: str


@dataclass(frozen=True)
class NoReport:
    """The child ended with no failure and no report."""

    code: ClassVar[FailureCause] = FailureCause.NO_REPORT


@dataclass(frozen=True)
class PairIncomplete:
    """A child measuring base and head did not return both sides."""

    code: ClassVar[FailureCause] = FailureCause.PAIR_INCOMPLETE


@dataclass(frozen=True)
class PairUnreadable:
    """A paired child's report the parent cannot read: `text`, the exception in one line."""

    code: ClassVar[FailureCause] = FailureCause.PAIR_UNREADABLE
    text: str


@dataclass(frozen=True)
class NotRecorded:
    """Recording what a child measured raised: `text`, the exception in one line."""

    code: ClassVar[FailureCause] = FailureCause.NOT_RECORDED
    text: str


@dataclass(frozen=True)
class NoFirstProcess:
    """A timing process with no first process's record to add to."""

    code: ClassVar[FailureCause] = FailureCause.NO_FIRST_PROCESS


@dataclass(frozen=True)
class NotFinite:
    """A measurement that is not a finite number: the first `value` (NaN, Infinity) at
    `key`, `more` found beyond it (`at_least`: counting stopped there)."""

    code: ClassVar[FailureCause] = FailureCause.NOT_FINITE
    value: str
    key: str
    more: int = 0
    at_least: bool = False


@dataclass(frozen=True)
class ArtifactsRefused:
    """The first process's cache artifacts could not be handed over: `text`, what the
    handover found (run/artifacts_handover.py)."""

    code: ClassVar[FailureCause] = FailureCause.ARTIFACTS_REFUSED
    text: str


@dataclass(frozen=True)
class NotMeasured:
    """No measurement, and no cause known."""

    code: ClassVar[FailureCause] = FailureCause.NOT_MEASURED


@dataclass(frozen=True)
class Interrupted:
    """The run was stopped by `signal_name` while this was measured."""

    code: ClassVar[FailureCause] = FailureCause.INTERRUPTED
    signal_name: str


# Why a step or variant was never measured (NotRun.why).
RUN_ENDED = "run_ended"  # the run ended before it (its placeholder until measured)
RUN_INTERRUPTED = "interrupted"  # the run was interrupted (`signal_name`) before it
FAILED_EAGERLY = "failed_eagerly"  # the step's eager references failed
HEAD_LACKS_STEP = "head_lacks_step"  # paired: the head does not declare the step


@dataclass(frozen=True)
class NotRun:
    """Never measured, for `why` (the constants above); `signal_name` of an interruption."""

    code: ClassVar[FailureCause] = FailureCause.NOT_RUN
    why: str
    signal_name: str | None = None


ChildCause = Union[
    TimedOut,
    WallCapPassed,
    DeadlineRanOut,
    Crashed,
    Exited,
    OutOfMemory,
    PidsLimit,
    NotStarted,
    NoResult,
    BadResult,
    UserError,
    LaunchFailed,
    NoReport,
    PairIncomplete,
    PairUnreadable,
    NotRecorded,
    NoFirstProcess,
    NotFinite,
    ArtifactsRefused,
    NotMeasured,
    Interrupted,
    NotRun,
]
# The field of each cause that holds text that is not compilegate's: the document keeps it
# in `error`, never in the record's figures.
_NOT_OURS = {
    Exited: "last_line",
    NotStarted: "reason",
    BadResult: "detail",
    UserError: "text",
    LaunchFailed: "text",
    PairUnreadable: "text",
    NotRecorded: "text",
    ArtifactsRefused: "text",
}
_CAUSES: dict[FailureCause, type[Any]] = {
    c.code: c
    for c in ChildCause.__args__  # type: ignore[attr-defined]
}


def budget_cause(passed: BudgetPassed, counted: str | None = None) -> TimedOut | WallCapPassed:
    """The cause of a child that passed a limit of its budget (run/child_budget.py)."""
    if passed.limit == "wall":
        return WallCapPassed(passed)
    return TimedOut(passed, counted)


@dataclass(frozen=True)
class ChildFailure:
    """A cause with where it was: `phase` (None: before the child's first progress line, or
    the parent's), `doing`, the child's last progress message ("" none), `last_output`, its
    last line of output ("" none), and where in the step: `stage` (None: the variant's first
    process, or where the step's own record says) with `process` of `processes`."""

    cause: ChildCause
    phase: Phase | None = None
    doing: str = ""
    last_output: str = ""
    stage: FailureStage | None = None
    process: int | None = None
    processes: int | None = None

    def record(self) -> FailureRecord:
        """The facts the result document keeps of it (the text that is not compilegate's
        goes to `error`: not_ours)."""
        cause = self.cause
        signal = getattr(cause, "signal_name", None)
        phase = self.phase.value if self.phase is not None else None
        return FailureRecord(
            cause.code,
            phase,
            signal,
            stage=self.stage,
            process=self.process,
            processes=self.processes,
            figures=_figures(cause),
            doing=self.doing or None,
            last_output=self.last_output or None,
        )

    def recorded(self) -> tuple[str, FailureRecord]:
        """(error, failure) as the document keeps them."""
        return self.not_ours(), self.record()

    def not_ours(self) -> str:
        """What the document keeps as the error: the cause's text that is not compilegate's
        (the user's exception, an exception's, the OS's, the child's last line before it
        exited); for a cause without such text the child's last line of output; else the
        cause's code, so that `error` is never empty where a failure is."""
        own = _NOT_OURS.get(type(self.cause))
        text = str(getattr(self.cause, own)) if own is not None else self.last_output
        return text or self.cause.code.value

    def at(
        self, stage: FailureStage, process: int | None = None, processes: int | None = None
    ) -> ChildFailure:
        """The same failure, where in the step it happened."""
        return ChildFailure(
            self.cause, self.phase, self.doing, self.last_output, stage, process, processes
        )


def _figures(cause: ChildCause) -> dict[str, Any]:
    own = _NOT_OURS.get(type(cause))
    out: dict[str, Any] = {}
    for name in (item.name for item in dataclasses.fields(cause)):
        if name in (own, "signal_name"):
            continue
        value = getattr(cause, name)
        if isinstance(value, BudgetPassed):
            out.update(
                limit=value.limit,
                cpu_used_s=value.cpu_used_s,
                wall_used_s=value.wall_used_s,
                cpu_s=value.budget.cpu_s,
                wall_s=value.budget.wall_s,
            )
        else:
            out[name] = value
    return out


def failure_of(record: FailureRecord, error: str | None) -> ChildFailure | None:
    """A recorded failure (one with its figures) read back, `error` the text that is not
    compilegate's; None for a record from before the figures (its `error` says it)."""
    figures = record.figures
    if figures is None:
        return None
    cls = _CAUSES[record.cause]
    values: dict[str, Any] = dict(figures)
    try:
        if "limit" in values:  # a budget passed
            budget = ChildBudget(values.pop("cpu_s"), values.pop("wall_s"))
            values["passed"] = BudgetPassed(
                values.pop("limit"), budget, values.pop("cpu_used_s"), values.pop("wall_used_s")
            )
    except KeyError:  # a record written by hand, lacking a figure: said as its error
        return None
    own = _NOT_OURS.get(cls)
    if own is not None:  # its text is `error` (the code: it had none)
        values[own] = error if error is not None and error != record.cause.value else ""
    names = {item.name for item in dataclasses.fields(cls)}
    if "signal_name" in names:
        values["signal_name"] = record.signal
    try:
        cause = cls(**{k: v for k, v in values.items() if k in names})
    except TypeError:  # a figure the cause needs is not there (the schema types each one)
        return None
    phase = Phase(record.phase) if record.phase is not None else None
    return ChildFailure(
        cause,
        phase,
        record.doing or "",
        record.last_output or "",
        record.stage,
        record.process,
        record.processes,
    )


def not_finite(entry: Model | ProcessReport, prefix: str = "") -> ChildFailure | None:
    """A measurement that is not a finite number, as the failure it is; None: all finite."""
    found = non_finite_found(entry, prefix)
    if found is None:
        return None
    return ChildFailure(NotFinite(found.value, found.key, found.more, found.at_least))
