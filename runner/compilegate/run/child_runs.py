"""Run one measuring child and read what it reported, typed at the launcher's door
(child/protocol.ChildReport) and each process's part (`eager`, `variant`) here, once, as a
results/process_report.ProcessReport: one side's process, or a paired child's two sides,
each checked as a report of its own. What fails becomes a typed failure, never an
exception: the schedule (step_measurement.py) makes it that step's or variant's failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..child.protocol import ChildReport, ChildSpec, ReportError
from ..config import StepConfig
from ..report.child_failure_words import failure_words
from ..results.model import Numerics
from ..results.process_report import ProcessReport, ProcessReportError, numerics_of
from ..results.processes import head_vs_base
from .child_failure import (
    BadResult,
    ChildFailure,
    LaunchFailed,
    NoReport,
    NotRecorded,
    PairIncomplete,
    PairUnreadable,
    UserError,
)
from .child_process import ChildOutcome
from .launcher import Launcher


@dataclass(frozen=True)
class ChildError:
    """Why a child gave no report to record: the child's failure, or the parent's own (a
    child it could not run, a report it cannot record), typed."""

    failure: ChildFailure

    @property
    def text(self) -> str:
        """The failure in report/child_failure_words.py's words, with the child's last line."""
        return failure_words(self.failure)


def _parents(cause: LaunchFailed | NoReport | PairIncomplete | PairUnreadable) -> ChildError:
    return ChildError(ChildFailure(cause))


@dataclass(frozen=True)
class Measured:
    """What one process measured of one side: the child's report (for a child that measured
    both sides, this side's part of it, checked as a report of its own), its `eager` and
    `variant` parts typed (empty where the child sent none), its numerics typed (None: it
    checked none) and, where base and head were timed in that process, the head's ratio to
    the base."""

    report: ChildReport
    eager: ProcessReport = field(default_factory=ProcessReport)
    variant: ProcessReport = field(default_factory=ProcessReport)
    head_vs_base: Mapping[str, float] | None = None
    numerics: Numerics | None = None

    @classmethod
    def of(cls, report: ChildReport, where: str = "") -> Measured:
        """The report with its process parts typed; ProcessReportError names the first
        field of another shape (`where`: the part's place in the child's report)."""
        return cls(
            report,
            _typed(report.eager, f"{where}eager"),
            _typed(report.variant, f"{where}variant"),
            numerics=numerics_of(report.numerics, f"{where}numerics"),
        )


def _typed(part: dict[str, object] | None, where: str) -> ProcessReport:
    return ProcessReport.from_json(part, where) if part is not None else ProcessReport()


def run_child(
    launcher: Launcher,
    spec: ChildSpec,
    step: StepConfig,
    label: str,
    *,
    cache_dir: Path | None = None,
) -> tuple[Measured, None] | tuple[None, ChildError]:
    """One child's report (typed at the launcher's door, its process parts here), or the
    error it ended with: exactly one is None."""
    spec = replace(spec, limits=step.limits.to_dict())  # a container launcher applies them
    # A distributed step's ranks share the child's budget: timeout_s CPU seconds each.
    timeout_s = step.timeout_s * step.processes_per_child
    try:
        outcome = launcher.run(
            spec, label=label, timeout_s=timeout_s, env_opt_in=step.env, cache_dir=cache_dir
        )
    except Exception as exc:  # the parent's own failure to run it: this child's error only
        return None, _parents(LaunchFailed(one_line(exc)))
    error = outcome_error(outcome)
    if error is not None:
        return None, error
    if outcome.report is None:  # outcome_error asserts it away; this says it to the checker
        return None, _parents(NoReport())
    return measured_of(outcome.report)


def measured_of(
    report: ChildReport, where: str = ""
) -> tuple[Measured, None] | tuple[None, ChildError]:
    """The report with its process parts typed, or the one-line error naming the first
    field the parent cannot read (the child runs user code, which can write anything)."""
    try:
        return Measured.of(report, where), None
    except ProcessReportError as exc:
        return None, ChildError(ChildFailure(BadResult("unparsable", str(exc)), None, ""))


def run_pair_child(
    launcher: Launcher,
    spec: ChildSpec,
    step: StepConfig,
    label: str,
    *,
    cache_dir: Path | None,
) -> tuple[dict[str, Measured], None] | tuple[dict[str, Measured], ChildError]:
    """One child measuring both sides (child/measure_pair.py; `spec.sides`: base first, then
    head): the eager references or a variant's warm timing (`spec.timing_only`); what each
    side measured, by side role, the head's ratio to the base with it, or the error."""
    measured, error = run_child(launcher, spec, step, label, cache_dir=cache_dir)
    if error is not None or measured is None:
        return {}, error or _parents(NoReport())
    report = measured.report
    found = report.sides or {}
    roles = [side.role for side in spec.sides]
    if set(found) != set(roles):
        return {}, _parents(PairIncomplete())
    out: dict[str, Measured] = {}
    try:  # each side's part, checked at the door as a one-side child's report
        for role, part in found.items():
            side = ChildReport.from_json({"status": "ok", "device": report.device, **part})
            typed, failed = measured_of(side, f"sides.{role}.")
            if failed is not None or typed is None:
                return {}, failed or _parents(PairUnreadable("unreadable"))
            out[role] = typed
    except (ReportError, TypeError) as exc:
        return {}, _parents(PairUnreadable(one_line(exc)))
    base, head_part = out[roles[0]], out[roles[-1]]
    kind = "variant" if spec.timing_only else "eager"
    try:
        ratio = head_vs_base(_part(head_part, kind), _part(base, kind))
    except Exception as exc:  # a sample list the ratio cannot read: the statistics say so
        return {}, ChildError(ChildFailure(NotRecorded(one_line(exc))))
    out[roles[-1]] = replace(head_part, head_vs_base=ratio)
    return out, None


def _part(measured: Measured, kind: str) -> ProcessReport:
    return measured.variant if kind == "variant" else measured.eager


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def outcome_error(outcome: ChildOutcome) -> ChildError | None:
    """Why the outcome has no report to record (its failure, or the error the child
    reported: the user's, with its phase), or None."""
    failure = outcome.failure
    if failure is not None:
        return ChildError(replace(failure, last_output=last_line(outcome)))
    assert outcome.report is not None
    report = outcome.report
    if report.status != "ok":
        said = " ".join(str(report.error).split())  # one line, as the words say it
        return ChildError(ChildFailure(UserError(said), report.phase, report.doing or ""))
    return None


def last_line(outcome: ChildOutcome) -> str:
    for line in reversed(outcome.output_tail):
        if line.strip():
            return line.strip()[:300]
    return ""
