"""The words for why a measuring child gave no report (run/child_failure.py's causes) and,
short, for a failed variant's recorded cause (results/model.ChildFailure).

`failure_text` is the error a result document records for a child's failure and the run
prints: the cause with its figures, then ` while ` and the child's last progress message
when it had one. `short_cause` is the cause in a few words with the phase it was in (run's
verdict line names failed variants by it; the table below says the error whole).
"""

from __future__ import annotations

from ..config.limits import shown_mib
from ..results.model import ChildFailure as FailureRecord
from ..results.model import FailureCause
from ..run.child_budget import WALL_CAP_FACTOR, BudgetPassed
from ..run.child_failure import (
    BadResult,
    ChildCause,
    ChildFailure,
    Crashed,
    DeadlineRanOut,
    Exited,
    NoResult,
    NotStarted,
    OutOfMemory,
    PidsLimit,
    TimedOut,
    UserError,
    WallCapPassed,
)
from ..run.descendant_cpu import COUNTED_LIVE_GROUP, COUNTED_WITH_SUBREAPER

# How a child's CPU seconds were counted (run/descendant_cpu.counting), said after them.
COUNTED_WORDS = {
    COUNTED_WITH_SUBREAPER: "every descendant counted, exited ones too: child subreaper",
    COUNTED_LIVE_GROUP: "live process group counted: no child subreaper",
}

# A failed variant's cause in a few words (run's verdict line).
SHORT_CAUSES = {
    FailureCause.TIMED_OUT: "timed out",
    FailureCause.WALL_CAP: "timed out",
    FailureCause.DEADLINE: "timed out",
    FailureCause.CRASHED: "crashed",
    FailureCause.OUT_OF_MEMORY: "out of memory",
    FailureCause.PIDS_LIMIT: "pids limit reached",
    FailureCause.EXITED: "exited",
    FailureCause.NOT_STARTED: "did not start",
    FailureCause.NO_RESULT: "no result",
    FailureCause.BAD_RESULT: "result refused",
    FailureCause.USER_ERROR: "raised",
}


def failure_text(failure: ChildFailure) -> str:
    """The one-line error of a child's failure: its cause, and where it was (a user's error
    says that itself: the child wrote it)."""
    text = cause_text(failure.cause)
    if failure.doing and not isinstance(failure.cause, UserError):
        text += f" while {failure.doing}"
    return text


def cause_text(cause: ChildCause) -> str:
    """One cause, with its figures."""
    if isinstance(cause, (TimedOut, WallCapPassed)):
        return budget_text(cause.passed, cause.counted if isinstance(cause, TimedOut) else None)
    if isinstance(cause, DeadlineRanOut):
        said = "timed out" if cause.started else "not started"
        return f"{said}: --timeout-s {cause.limit_s:g} s ran out"
    if isinstance(cause, Crashed):
        return f"child process crashed with signal {cause.signal_name} ({cause.signal_number})"
    if isinstance(cause, Exited):
        last = f": {cause.last_line}" if cause.last_line else ""
        return f"child process exited with code {cause.exit_code}{last}"
    if isinstance(cause, OutOfMemory):
        return f"killed: out of memory (limit {shown_mib(cause.limit_mib)})"
    if isinstance(cause, PidsLimit):
        return f"pids limit {cause.pids} reached ({cause.refused} forks refused)"
    if isinstance(cause, NotStarted):
        if cause.program is None:
            return f"container did not start: {cause.reason}"
        return f"cannot start {cause.program}: {cause.reason}"
    if isinstance(cause, NoResult):
        return "child process exited without writing its result"
    if isinstance(cause, BadResult):
        return _bad_result_text(cause)
    return " ".join(cause.text.split())


def budget_text(passed: BudgetPassed, counted: str | None = None) -> str:
    """Which limit a child passed, and for the CPU seconds how they were `counted` where the
    launcher says (the host's; a container's are the engine's)."""
    budget = passed.budget
    if passed.limit == "cpu":
        how = f" ({COUNTED_WORDS.get(counted, counted)})" if counted else ""
        return (
            f"timed out: used {passed.cpu_used_s:.0f} CPU-s (timeout_s {budget.cpu_s:g}) "
            f"in {passed.wall_used_s:.0f} s{how}"
        )
    if passed.limit == "wall":
        used = f"{passed.cpu_used_s:.0f} CPU-s used" if passed.cpu_used_s is not None else ""
        usual = budget.wall_s == WALL_CAP_FACTOR * budget.cpu_s
        why = f"{WALL_CAP_FACTOR:g} × timeout_s {budget.cpu_s:g}" if usual else ""
        said = "; ".join(part for part in (why, used) if part)
        return f"timed out: wall cap {budget.wall_s:g} s passed" + (f" ({said})" if said else "")
    return f"timed out after {budget.cpu_s:g} s (timeout_s, wall clock: CPU time unreadable)"


def short_cause(record: FailureRecord) -> str:
    """A failed variant's cause in a few words with its phase: `timed out while numerics`,
    `crashed (SIGKILL) while compile`."""
    said = SHORT_CAUSES[record.cause]
    if record.signal:
        said += f" ({record.signal})"
    return f"{said} while {record.phase}" if record.phase else said


def _bad_result_text(cause: BadResult) -> str:
    if cause.how == "refused":
        return f"child process wrote a result the parent refuses: {cause.detail}"
    if cause.how == "unreadable":
        return f"child process wrote an unreadable result ({cause.detail})"
    if cause.how == "collected":
        return f"child process result {cause.detail}"
    if cause.how == "over":  # containers/limits.output_over says it whole
        return cause.detail
    return f"child process wrote a result the parent cannot read: {cause.detail}"
