"""Numerics: compiled vs eager against a float64 reference, judged pass → fail."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ...results.model import (
    ComparedBy,
    Numerics,
    NumericsReason,
    NumericsStatus,
    ReferenceDisagreement,
    Variant,
)
from ..row_facts_base import RowFactsBase
from ..rules import MUST_PASS, Subject
from ..verdict import MetricVerdict, Verdict
from .sides import Sides

CHECKED = (NumericsStatus.PASS, NumericsStatus.FAIL)


class NumericsOutcome(str, Enum):
    """What comparing the two sides' numerics verdicts found."""

    UNCHECKED_IN_RUN = "unchecked_in_run"  # this run has no pass/fail verdict
    UNCHECKED_IN_BASELINE = "unchecked_in_baseline"  # this run has one, the baseline not
    BROKE = "pass_to_fail"
    FIXED = "fail_to_pass"
    STILL_FAILS = "still_fails"
    STILL_PASSES = "still_passes"


@dataclass(frozen=True)
class NumericsSide:
    """One side's numerics as its document has them: its status (None when absent), the
    tensors that failed, the reason the check gave (a code, or text: the exception that
    stopped it, or the document's own sentence; said for a check that reached no verdict,
    never read), and how it compared: with or without its float64 reference (`reference`:
    "float64", "none", None when not recorded), why not (`reference_error`,
    `reference_disagreement`), by which rule (`compared_by`) and cosine threshold
    (`cosine_min`), each None where the document does
    not record it."""

    status: NumericsStatus | None = None
    failed: tuple[str, ...] = ()
    reason: NumericsReason | str | None = None
    reference: str | None = None
    reference_error: str | None = None
    compared_by: ComparedBy | None = None
    cosine_min: float | None = None
    # Why no reference, as facts (since issue 53's last items; before: `reference_error`).
    reference_disagreement: ReferenceDisagreement | None = None

    @classmethod
    def of(cls, numerics: Numerics | None) -> NumericsSide:
        if numerics is None:
            return cls()
        return cls(
            numerics.status,
            tuple(numerics.failed or ()),
            _reason(numerics),
            numerics.reference,
            numerics.reference_error,
            numerics.compared_by,
            numerics.cosine_min,
            numerics.reference_disagreement,
        )


def _reason(numerics: Numerics) -> NumericsReason | str | None:
    """The check's reason; for one that raised, its exception (what is said of it)."""
    if numerics.reason is NumericsReason.ERROR and numerics.error is not None:
        return numerics.error
    return numerics.reason


@dataclass(frozen=True)
class NumericsFacts(RowFactsBase):
    kind: ClassVar[str] = "numerics"
    outcome: NumericsOutcome
    baseline: NumericsSide
    run: NumericsSide


def judge(sides: Sides) -> list[MetricVerdict]:
    base, cur = sides.pair
    if not isinstance(base, Variant) or not isinstance(cur, Variant):
        return []  # eager has no numerics of its own
    row = judge_numerics(
        sides.subject, base.numerics, cur.numerics, required=sides.policy.numerics_required
    )
    return [row] if row is not None else []


def judge_numerics(
    subject: Subject, base: Numerics | None, cur: Numerics | None, *, required: bool = False
) -> MetricVerdict | None:
    """pass → fail is a regression. A side without a pass/fail verdict (numerics errored,
    were skipped or are absent) while the other has one, or while the baseline's policy
    checks numerics (`required`), is `missing`: an unchecked compile is not a pass."""
    base_status = base.status if base is not None else None
    cur_status = cur.status if cur is not None else None
    if base_status not in CHECKED and cur_status not in CHECKED and not required:
        return None
    if cur_status not in CHECKED:
        verdict, outcome = Verdict.MISSING, NumericsOutcome.UNCHECKED_IN_RUN
    elif base_status not in CHECKED:
        verdict, outcome = Verdict.MISSING, NumericsOutcome.UNCHECKED_IN_BASELINE
    elif (base_status, cur_status) == (NumericsStatus.PASS, NumericsStatus.FAIL):
        verdict, outcome = Verdict.REGRESSION, NumericsOutcome.BROKE
    elif (base_status, cur_status) == (NumericsStatus.FAIL, NumericsStatus.PASS):
        verdict, outcome = Verdict.IMPROVEMENT, NumericsOutcome.FIXED
    elif cur_status is NumericsStatus.FAIL:
        verdict, outcome = Verdict.PASS, NumericsOutcome.STILL_FAILS
    else:
        verdict, outcome = Verdict.PASS, NumericsOutcome.STILL_PASSES
    return subject.row(
        "numerics",
        verdict,
        direction=MUST_PASS,
        unit="status",
        baseline=_word(base_status),
        current=_word(cur_status),
        facts=NumericsFacts(outcome, NumericsSide.of(base), NumericsSide.of(cur)),
    )


def _word(status: NumericsStatus | None) -> str | None:
    return status.value if status is not None else None
