"""Why a measuring child gave no report, as a value: what the launchers (run/launcher.py,
containers/child_launcher.py) found, typed where they found it, never a sentence read back.

A cause carries its own figures (the budget a child passed, the signal that ended it, the
exit code and last line); `ChildFailure` adds the phase the child was in (the phase field of
its last progress line, child/protocol.Phase) and that line's message. The words for each
are report/child_failure_words.py's; the document records the cause and the phase
(results/model.ChildFailure) beside the error said in those words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from ..child.protocol import Phase
from ..results.model import ChildFailure as FailureRecord
from ..results.model import FailureCause
from .child_budget import BudgetPassed


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
]


def budget_cause(passed: BudgetPassed, counted: str | None = None) -> TimedOut | WallCapPassed:
    """The cause of a child that passed a limit of its budget (run/child_budget.py)."""
    if passed.limit == "wall":
        return WallCapPassed(passed)
    return TimedOut(passed, counted)


@dataclass(frozen=True)
class ChildFailure:
    """A child's cause with where it was: `phase` (None: before its first progress line)
    and `doing`, its last progress message ("" none)."""

    cause: ChildCause
    phase: Phase | None = None
    doing: str = ""

    def record(self) -> FailureRecord:
        """The facts the result document keeps of it."""
        cause = self.cause
        signal = cause.signal_name if isinstance(cause, Crashed) else None
        phase = self.phase.value if self.phase is not None else None
        return FailureRecord(cause.code, phase, signal)
