"""The words of a numerics row (gate/judges/numerics.py)."""

from __future__ import annotations

from ...gate.judges.numerics import CHECKED, NumericsFacts, NumericsOutcome, NumericsSide
from ...gate.verdict import MetricVerdict, Verdict
from ..absence_words import numerics_reason_words
from .numerics_reference import of_row
from .sentence import RowSentence
from .worded import WordedRow

# Failed tensors named in a row; the rest are counted.
NAMED_TENSORS = 3


def numerics_said(row: MetricVerdict, facts: NumericsFacts) -> WordedRow:
    """The row's words; a run checked without its float64 reference says so, with why and
    what it compared instead (numerics_reference.py), and a passing one needs a look."""
    words = _verdict_words(row, facts)
    fallback = of_row(row)
    if fallback is not None:
        words += f"; {fallback.words()}"
    look = fallback if row.verdict is Verdict.PASS else None
    return WordedRow(RowSentence("", words), look=look)


def _verdict_words(row: MetricVerdict, facts: NumericsFacts) -> str:
    run, base = facts.run, facts.baseline
    detail = _detail(run)
    if facts.outcome is NumericsOutcome.UNCHECKED_IN_RUN:
        return f"numerics not checked in this run ({_status(run) or 'no verdict'}{detail})"
    if facts.outcome is NumericsOutcome.UNCHECKED_IN_BASELINE:
        return (
            f"numerics {_status(run)} in this run, but the baseline has no numerics verdict "
            f"({_status(base) or 'none'}{_detail(base)}): nothing to judge it against"
        )
    if facts.outcome is NumericsOutcome.BROKE:
        return f"numerics pass → fail{detail}"
    if facts.outcome is NumericsOutcome.FIXED:
        return "numerics fail → pass"
    if facts.outcome is NumericsOutcome.STILL_FAILS:
        return f"numerics still fail, as in the baseline{detail}"
    return "numerics pass, as in the baseline"


def _status(side: NumericsSide) -> str | None:
    return side.status.value if side.status is not None else None


def _detail(side: NumericsSide) -> str:
    """`: grad:a, grad:b, grad:c and 2 more`, or `: the reason` of a check that reached no
    verdict (errored, skipped), or nothing. A check that reached one is said by its fields:
    its failed tensors here, its missing float64 reference by numerics_reference.py."""
    failed = side.failed
    if failed:
        more = f" and {len(failed) - NAMED_TENSORS} more" if len(failed) > NAMED_TENSORS else ""
        return f": {', '.join(failed[:NAMED_TENSORS])}{more}"
    said = numerics_reason_words(side.reason, None)
    return f": {said}" if said and side.status not in CHECKED else ""
