"""What comparing a result with its baseline concluded, row by row and overall.

One `MetricVerdict` per step × variant × metric, with one of these verdicts:

    regression    worse by more than the threshold *and* than the noise of both runs,
                  with that noise no wider than the threshold (gate/rules.py)
    error         the step or variant failed in this run
    missing       a gated metric could not be judged: measured on one side only (stripped,
                  its diagnostics failed, its numerics errored) or not a finite number
    removed       a step or variant of the baseline that this run does not have (and, for
                  a step, that the run did not merely leave out with --step)
    incomparable  not compared, and why: another GPU model, CPU model or device type, a
                  changed step configuration or variant definition, or a baseline that has
                  no good measurement of it
    accepted      a regression a maintainer accepted with the base branch's label on the
                  pull request (gate/acceptance.py, verified by github/acceptance.py)
    inconclusive  beyond the threshold but inside the noise, or with a noise wider than
                  the threshold: the runs cannot tell
    improvement   better by more than the threshold and than the noise of both runs
    new           nothing to compare with: a step or variant this run adds, or a
                  measurement the baseline predates (compile cost, in an old baseline)
    skipped       in the baseline, left out of this run with --step: not compared
    pass          within the threshold (or a possible improvement still inside the noise)

What fails the job is not configurable, so neither a pull request's config nor a crafted
result can loosen it: VERDICT_EXIT_CODES below is the one table (errors.EXIT_CODES says
what each code means; docs/gate.md shows both). The overall verdict is the
first of OVERALL_ORDER that has a row ("new" only when every row is new), and the exit
code is that verdict's. `inconclusive` passes: failing on noise would block merges on
luck; its headline names the change the runs could have detected.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSION, EXIT_RUN_ERROR
from ..results.formats import Value
from ..results.model import ResultDocument
from .row_facts_base import RowFactsBase

if TYPE_CHECKING:  # both import this module
    from .notes import Note, PairedNote


class Verdict(str, Enum):
    """A row's verdict (the module's docstring says what each means). A `str` so that a
    document, a test or a table key may name it by its value; it prints as its value."""

    REGRESSION = "regression"
    ERROR = "error"
    MISSING = "missing"
    REMOVED = "removed"
    INCOMPARABLE = "incomparable"
    ACCEPTED = "accepted"
    INCONCLUSIVE = "inconclusive"
    IMPROVEMENT = "improvement"
    NEW = "new"
    SKIPPED = "skipped"
    PASS = "pass"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class Acceptance:
    """A label on the pull request, applied by `login` while its head was `commit`, verified
    by github/acceptance.py: it accepts that commit's regressions and no later one's
    (gate/acceptance.py)."""

    label: str
    login: str
    commit: str

    def to_dict(self) -> dict[str, str]:
        return {"login": self.login, "label": self.label, "commit": self.commit}


# Every verdict and the exit code it gives the job when it is the overall verdict, in
# table order: what needs attention first.
VERDICT_EXIT_CODES: dict[Verdict, int] = {
    Verdict.REGRESSION: EXIT_REGRESSION,
    Verdict.ERROR: EXIT_RUN_ERROR,
    Verdict.MISSING: EXIT_NOT_JUDGED,
    Verdict.REMOVED: EXIT_NOT_JUDGED,
    Verdict.INCOMPARABLE: EXIT_NOT_JUDGED,
    Verdict.ACCEPTED: EXIT_OK,
    Verdict.INCONCLUSIVE: EXIT_OK,
    Verdict.IMPROVEMENT: EXIT_OK,
    Verdict.NEW: EXIT_OK,
    Verdict.SKIPPED: EXIT_OK,
    Verdict.PASS: EXIT_OK,
}
VERDICTS = SEVERITY_ORDER = tuple(VERDICT_EXIT_CODES)
# The overall verdict: the first of these with a row (regressions outrank errors elsewhere).
OVERALL_ORDER = (
    Verdict.REGRESSION,
    Verdict.ERROR,
    Verdict.MISSING,
    Verdict.REMOVED,
    Verdict.INCOMPARABLE,
    Verdict.ACCEPTED,
    Verdict.INCONCLUSIVE,
)


REFRESH_ADVICE = "if this change is intended, accept it as the baseline on the default branch"
REFRESH_TEMPLATE = "compilegate baseline update --result RESULT --baseline BASELINE"


@dataclass(frozen=True)
class EnvironmentSummary:
    """Where one side of the comparison was measured (for the headline and the JSON)."""

    torch: str | None = None
    device: str | None = None
    gpu_name: str | None = None
    created_at: str | None = None
    commit: str | None = None

    @classmethod
    def from_document(cls, document: ResultDocument) -> EnvironmentSummary:
        env = document.environment
        return cls(
            torch=env.torch,
            device=env.device,
            gpu_name=env.gpu_name,
            created_at=document.created_at,
            commit=env.commit,
        )


# MetricVerdict.noise_source: whose spread a speed row's noise is.
NOISE_FROM_HISTORY = "history"
NOISE_FROM_RUNS = "runs"


@dataclass(frozen=True)
class MetricVerdict:
    """One compared metric of one step (and variant), with everything it was judged on.

    `variant` is None for rows about a whole step; "eager" for the eager step time.
    `unit` is the unit of `baseline`/`current` ("x", "ms", "s", "bytes", "count", "status");
    `change_unit` is "pct" or "count"; `threshold` is in `change_unit`. `noise_pct` is the
    combined noise of both runs the change was judged against (speed metrics only), and
    `detectable_change_pct` the smallest change this comparison could call a regression.
    `normalisation` says how step times were compared: "yardstick" (in units of the machine
    yardstick timed beside them) or "raw" (milliseconds; e.g. across torch versions).
    `noise_source` says whose spread the noise is: "history" (the default branch's last runs,
    which a rerun of this one does not narrow) or "runs" (the processes of the runs compared).
    `gated` is False for a row that is reported and never judged (its verdict is then
    `pass` whatever the change): compile wall time unless the baseline's policy gates it,
    compile-work counts across torch versions, what the step changed in torch's state.
    `decidable` is False when the row's noise is too wide to decide its threshold
    (rules.decides_threshold): such a row is never a failure, and the report says "too
    noisy to judge" from this field instead of deciding it again.
    """

    step: str
    variant: str | None
    metric: str
    verdict: Verdict
    # What the judge found, as values (its family's facts, one member of the closed union
    # gate/row_facts.py `RowFacts`, which imports the judges that import this module):
    # every word of the row is composed from them in report/row_words/.
    facts: RowFactsBase
    direction: str | None = None
    unit: str | None = None
    baseline: Value = None
    current: Value = None
    change: float | None = None
    change_unit: str | None = None
    threshold: float | None = None
    noise_pct: float | None = None
    detectable_change_pct: float | None = None
    normalisation: str | None = None
    noise_source: str | None = None
    gated: bool = True
    decidable: bool = True
    # Who accepted this row's regression (verdict `accepted`, gate/acceptance.py); its facts
    # are still those the judge found of the regression.
    accepted_by: Acceptance | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")
        object.__setattr__(self, "verdict", Verdict(self.verdict))

    def to_dict(self) -> dict[str, Any]:
        """The row's values for JSON, its facts tagged with their kind; its words are the
        report's (report/verdict_json.py adds them)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["facts"] = self.facts.to_dict()
        fields["accepted_by"] = self.accepted_by.to_dict() if self.accepted_by else None
        return fields


@dataclass(frozen=True)
class VerdictReport:
    """All verdict rows of one comparison, the two environments, and notes for the reader."""

    verdicts: tuple[MetricVerdict, ...]
    baseline: EnvironmentSummary
    current: EnvironmentSummary
    notes: tuple[Note, ...] = ()  # values (gate/notes.py); report/note_words.py words them
    # The command that accepts this result as the baseline, when the CLI knows both paths.
    refresh_command: str | None = None
    # A paired comparison (gate/pairing.py): how it was paired, the pairing and its pairs
    # (report/note_words.paired_summary words it), else None. Nothing to refresh then: the
    # base is measured anew in every paired run.
    paired: PairedNote | None = None
    # Who accepted this report's regressions, with which label, at which commit
    # (gate/acceptance.py), else None.
    accepted_by: Acceptance | None = None

    def with_paths(self, result_path: str | Path, baseline_path: str | Path) -> VerdictReport:
        """This report, knowing the command that would refresh the baseline from the result."""
        command = shlex.join(
            [
                "compilegate",
                "baseline",
                "update",
                "--result",
                str(result_path),
                "--baseline",
                str(baseline_path),
            ]
        )
        return dataclasses.replace(self, refresh_command=command)

    @property
    def failing_refresh_command(self) -> str | None:
        """The command to run when the failing change is intended (a regression, or something
        the gate could not judge): refreshing the baseline on the default branch accepts it.
        None when the job passes or failed on an error, which a refresh does not accept (a
        failed variant keeps its last good baseline)."""
        if self.exit_code not in (EXIT_REGRESSION, EXIT_NOT_JUDGED) or self.paired:
            return None
        return self.refresh_command or REFRESH_TEMPLATE

    @property
    def overall(self) -> Verdict:
        counts = self.counts()
        for verdict in (*OVERALL_ORDER, Verdict.IMPROVEMENT):
            if counts[verdict]:
                return verdict
        if self.verdicts and counts[Verdict.NEW] == len(self.verdicts):
            return Verdict.NEW
        return Verdict.PASS

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT_CODES[self.overall]

    def counts(self) -> dict[Verdict, int]:
        """Rows per verdict, every verdict present (zero when none)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.verdicts:
            counts[row.verdict] += 1
        return counts

    def rows(self, verdict: str | None = None, metric: str | None = None) -> list[MetricVerdict]:
        """The rows with this verdict and/or metric (all rows when neither is given)."""
        return [
            row
            for row in self.verdicts
            if (verdict is None or row.verdict == verdict)
            and (metric is None or row.metric == metric)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "overall": self.overall,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "notes": [note.to_dict() for note in self.notes],
            "paired": self.paired.to_dict() if self.paired is not None else None,
            "accepted_by": self.accepted_by.to_dict() if self.accepted_by else None,
            "refresh_command": self.failing_refresh_command,
            "baseline": dataclasses.asdict(self.baseline),
            "current": dataclasses.asdict(self.current),
            "verdicts": [row.to_dict() for row in self.verdicts],
        }


def sorted_by_severity(rows: Iterable[MetricVerdict]) -> list[MetricVerdict]:
    """Regressions first, then errors, inconclusive, improvements, the rest; stable otherwise."""
    order = {verdict: index for index, verdict in enumerate(SEVERITY_ORDER)}
    return sorted(rows, key=lambda row: order[row.verdict])
