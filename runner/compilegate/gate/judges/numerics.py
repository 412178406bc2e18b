"""Numerics: compiled vs eager against a float64 reference, judged pass → fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rules import MUST_PASS, Subject
from ..verdict import MetricVerdict
from .sides import Sides

Doc = Mapping[str, Any]


def judge(sides: Sides) -> list[MetricVerdict]:
    base, cur = sides.json.pair
    row = judge_numerics(
        sides.subject,
        base.get("numerics"),
        cur.get("numerics"),
        required=sides.policy.numerics_required,
    )
    return [row] if row is not None else []


def judge_numerics(
    subject: Subject, base: Doc | None, cur: Doc | None, *, required: bool = False
) -> MetricVerdict | None:
    """pass → fail is a regression. A side without a pass/fail verdict (numerics errored,
    were skipped or are absent) while the other has one, or while the baseline's policy
    checks numerics (`required`), is `missing`: an unchecked compile is not a pass."""
    checked = ("pass", "fail")
    base_status, cur_status = (base or {}).get("status"), (cur or {}).get("status")
    if base_status not in checked and cur_status not in checked and not required:
        return None
    detail = _numerics_detail(cur or {})
    if cur_status not in checked:
        verdict, message = (
            "missing",
            f"numerics not checked in this run ({cur_status or 'no verdict'}{detail})",
        )
    elif base_status not in checked:
        verdict, message = (
            "missing",
            f"numerics {cur_status} in this run, but the baseline has no numerics verdict "
            f"({base_status or 'none'}{_numerics_detail(base or {})}): nothing to judge it against",
        )
    elif (base_status, cur_status) == ("pass", "fail"):
        verdict, message = "regression", f"numerics pass → fail{detail}"
    elif (base_status, cur_status) == ("fail", "pass"):
        verdict, message = "improvement", "numerics fail → pass"
    elif cur_status == "fail":
        verdict, message = "pass", f"numerics still fail, as in the baseline{detail}"
    else:
        verdict, message = "pass", "numerics pass, as in the baseline"
    return subject.row(
        "numerics",
        verdict,
        message,
        direction=MUST_PASS,
        unit="status",
        baseline=base_status,
        current=cur_status,
    )


def _numerics_detail(numerics: Doc) -> str:
    failed = numerics.get("failed") or []
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return f": {', '.join(failed[:3])}{more}"
    return f": {numerics['reason']}" if numerics.get("reason") else ""
