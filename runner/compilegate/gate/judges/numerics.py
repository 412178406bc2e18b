"""Numerics: compiled vs eager against a float64 reference, judged pass → fail."""

from __future__ import annotations

from ...results.model import Numerics, NumericsStatus, Variant
from ..rules import MUST_PASS, Subject
from ..verdict import MetricVerdict
from .sides import Sides

CHECKED = (NumericsStatus.PASS, NumericsStatus.FAIL)


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
    detail = _numerics_detail(cur)
    cur_word, base_word = _word(cur_status), _word(base_status)
    if cur_status not in CHECKED:
        verdict, message = (
            "missing",
            f"numerics not checked in this run ({cur_word or 'no verdict'}{detail})",
        )
    elif base_status not in CHECKED:
        verdict, message = (
            "missing",
            f"numerics {cur_word} in this run, but the baseline has no numerics verdict "
            f"({base_word or 'none'}{_numerics_detail(base)}): nothing to judge it against",
        )
    elif (base_status, cur_status) == (NumericsStatus.PASS, NumericsStatus.FAIL):
        verdict, message = "regression", f"numerics pass → fail{detail}"
    elif (base_status, cur_status) == (NumericsStatus.FAIL, NumericsStatus.PASS):
        verdict, message = "improvement", "numerics fail → pass"
    elif cur_status is NumericsStatus.FAIL:
        verdict, message = "pass", f"numerics still fail, as in the baseline{detail}"
    else:
        verdict, message = "pass", "numerics pass, as in the baseline"
    return subject.row(
        "numerics",
        verdict,
        message,
        direction=MUST_PASS,
        unit="status",
        baseline=base_word,
        current=cur_word,
    )


def _word(status: NumericsStatus | None) -> str | None:
    return status.value if status is not None else None


def _numerics_detail(numerics: Numerics | None) -> str:
    if numerics is None:
        return ""
    failed = numerics.failed or ()
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return f": {', '.join(failed[:3])}{more}"
    return f": {numerics.reason}" if numerics.reason else ""
