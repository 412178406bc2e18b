"""The words for why a measuring child gave no report (run/child_failure.py's causes) and,
short, for a failed variant's recorded cause (results/model.ChildFailure).

`failure_text` is a child's failure in words: the cause with its figures, then ` while `
and the child's last progress message when it had one. `failure_words` is the whole error of
a failed variant or step as the run prints it and the reports say it: where in the step it
failed (`eager: `, `timing process 2/3: `), the failure, the child's last line of output.
`error_words` says a document's failure: from its record's facts, or (a document from before
issue 53) its `error` as recorded. `short_cause` is the cause in a few words with the phase
it was in (run's verdict line names failed variants by it; the table below says the error
whole).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config.limits import shown_mib
from ..results.model import ChildFailure as FailureRecord
from ..results.model import FailureCause, FailureStage, part_of
from ..run.child_budget import WALL_CAP_FACTOR, BudgetPassed
from ..run.child_failure import (
    FAILED_EAGERLY,
    HEAD_LACKS_STEP,
    RUN_INTERRUPTED,
    ArtifactsRefused,
    BadResult,
    ChildCause,
    ChildFailure,
    Crashed,
    DeadlineRanOut,
    Exited,
    Interrupted,
    LaunchFailed,
    NoFirstProcess,
    NoReport,
    NoResult,
    NotFinite,
    NotMeasured,
    NotRecorded,
    NotRun,
    NotStarted,
    OutOfMemory,
    PairIncomplete,
    PairUnreadable,
    PidsLimit,
    TimedOut,
    UserError,
    WallCapPassed,
    failure_of,
)
from ..run.descendant_cpu import COUNTED_LIVE_GROUP, COUNTED_WITH_SUBREAPER

# How a child's CPU seconds were counted (run/descendant_cpu.counting), said after them.
COUNTED_WORDS = {
    COUNTED_WITH_SUBREAPER: "every descendant counted, exited ones too: child subreaper",
    COUNTED_LIVE_GROUP: "live process group counted: no child subreaper",
}

# A failed variant's cause in a few words (run's verdict line): a child's causes (the
# parent's own are said by the first line of their words).
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
# The prefix of a failure's words by where in the step it happened (timing_process: its
# process of processes).
_STAGES = {FailureStage.EAGER: "eager: ", FailureStage.SUMMARY: "summary: "}


def failure_text(failure: ChildFailure) -> str:
    """The one-line error of a child's failure: its cause, and where it was (a user's error
    says that itself: the child wrote it)."""
    text = cause_text(failure.cause)
    if failure.doing and not isinstance(failure.cause, UserError):
        text += f" while {failure.doing}"
    return text


def failure_words(failure: ChildFailure) -> str:
    """A failed variant's or step's whole error: where in the step, the failure, the child's
    last line of output."""
    text = failure_text(failure)
    if failure.last_output:
        text += f" (last output: {failure.last_output})"
    if failure.stage is FailureStage.TIMING_PROCESS:
        return f"timing process {failure.process}/{failure.processes}: {text}"
    return _STAGES.get(failure.stage, "") + text if failure.stage is not None else text


def error_words(error: str | None, record: FailureRecord | None) -> str | None:
    """A document's failed variant or step in words: from its failure's facts, or (recorded
    before them: issue 53) its error as recorded."""
    failure = failure_of(record, error) if record is not None else None
    return failure_words(failure) if failure is not None else error


def said_error(raw: Mapping[str, Any]) -> str | None:
    """A result document's step or variant, as JSON: its failure in words (for the tests and
    benches that read documents raw)."""
    failure = raw.get("failure")
    record = part_of(FailureRecord, failure) if isinstance(failure, Mapping) else None
    error = raw.get("error")
    return error_words(error if isinstance(error, str) else None, record)


def cause_text(cause: ChildCause) -> str:
    """One cause, with its figures."""
    parents = _parent_text(cause)
    if parents is not None:
        return parents
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
    assert isinstance(cause, UserError)  # _parent_text said the others
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


def _parent_text(cause: ChildCause) -> str | None:
    """The parent's own causes (None: a child's)."""
    if isinstance(cause, LaunchFailed):
        return f"compilegate could not run this child: {cause.text}"
    if isinstance(cause, NoReport):
        return "the child ended without a report"
    if isinstance(cause, PairIncomplete):
        return "the paired child did not return both sides"
    if isinstance(cause, PairUnreadable):
        return f"the paired child's report: {cause.text}"
    if isinstance(cause, NotRecorded):
        return f"compilegate could not record this measurement: {cause.text}"
    if isinstance(cause, NoFirstProcess):
        return "compilegate could not record this measurement: no first process"
    if isinstance(cause, NotFinite):
        more = f" (and {cause.more} more)" if cause.more else ""
        if cause.at_least:
            more = f" (and at least {cause.more} more)"
        return f"the measurement produced {cause.value} at {cause.key}{more}, not a finite number"
    if isinstance(cause, ArtifactsRefused):
        return f"cache artifacts refused: {cause.text}"
    if isinstance(cause, NotMeasured):
        return "not measured"
    if isinstance(cause, Interrupted):
        return stopped_words(cause.signal_name)
    if isinstance(cause, NotRun):
        return _not_run_text(cause)
    return None


def stopped_words(signal_name: str | None) -> str:
    return f"interrupted ({signal_name})"


def _not_run_text(cause: NotRun) -> str:
    if cause.why == RUN_INTERRUPTED:
        return f"not run: the run was {stopped_words(cause.signal_name)}"
    if cause.why == FAILED_EAGERLY:
        return "not run: the step failed eagerly"
    if cause.why == HEAD_LACKS_STEP:
        return "not measured: the head does not declare this step"
    return "not run: the run ended before this step"


def short_cause(record: FailureRecord) -> str | None:
    """A failed variant's cause in a few words with its phase: `timed out while numerics`,
    `crashed (SIGKILL) while compile`; None for the parent's own causes."""
    said = SHORT_CAUSES.get(record.cause)
    if said is None:
        return None
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
