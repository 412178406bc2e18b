"""The versions table of the first screen: one row per torch version × step — its gate,
what failed (a new graph break with its file:line), compiled vs eager (best) and when
compiling pays off; one row per version past VERSION_ROWS_SHOWN rows."""

from __future__ import annotations

from ...gate.run_set import RunSetVerdict, VersionOutcome
from ...gate.verdict import MetricVerdict, sorted_by_severity
from ...results.model import Step
from .. import wording as w
from ..row_words.diagnostics import new_break_site, place_name
from ..speeds import best_speed_text, pays_off_text
from ..wording import plain_torch as _plain_torch

# Past this many version × step rows, one row per version (the details keep every step).
VERSION_ROWS_SHOWN = 24


def version_label(version: VersionOutcome) -> str:
    """`2.9.1` (its torch, without the local suffix), or the version's label."""
    return _plain_torch(version.torch) if version.torch else version.label.removeprefix("torch ")


def version_rows(run_set: RunSetVerdict) -> list[tuple[str, ...]]:
    rows = [row for version in run_set.versions for row in _version_rows(version)]
    if len(rows) <= VERSION_ROWS_SHOWN:
        return rows
    return [_version_summary(version) for version in run_set.versions]


def _version_summary(version: VersionOutcome) -> tuple[str, ...]:
    """One row for a whole version: its worst gate and the steps that failed."""
    rows = _version_rows(version)
    label = rows[0][0]
    if version.document is None:
        return rows[0]
    failed = [r for r in rows if r[2].startswith(w.FAIL_ICON)]
    unclear = [r for r in rows if r[2].startswith(w.LOOK_ICON)]
    gate = (failed or unclear or rows)[0][2]
    what = "; ".join(f"{r[1]}: {r[3]}" for r in (failed or unclear)[:3])
    if len(failed or unclear) > 3:
        what += f"; and {len(failed or unclear) - 3} more steps"
    return (label, f"{len(rows)} steps", gate, what or "-", "per step: see details", "-")


def _version_rows(version: VersionOutcome) -> list[tuple[str, ...]]:
    label = version_label(version)
    if version.document is None:
        return [
            (label, "-", f"{w.FAIL_ICON} error", w.version_error(version) or "no result", "-", "-")
        ]
    rows: list[tuple[str, ...]] = []
    by_step: dict[str, list[MetricVerdict]] = {}  # one pass: a result may hold 100,000 steps
    for verdict in version.verdict.verdicts if version.verdict is not None else ():
        by_step.setdefault(verdict.step, []).append(verdict)
    for index, step in enumerate(version.document.steps):
        mine = by_step.get(step.name, [])
        rows.append(
            (
                label if index == 0 else "",
                step.name,
                _gate(version, mine, step),
                _what_failed(mine, step),
                best_speed_text(step),
                pays_off_text(step),
            )
        )
    return rows


def _gate(version: VersionOutcome, rows: list[MetricVerdict], step: Step) -> str:
    if version.verdict is None:
        return f"{w.FAIL_ICON} error" if step.failed else "measured"
    if not rows:
        return "-"
    top = sorted_by_severity(rows)[0].verdict
    if top in w.FAILING:
        return f"{w.FAIL_ICON} fails"
    if top == "inconclusive":
        return f"{w.LOOK_ICON} unclear"
    if top == "accepted":
        return "accepted"
    return {"improvement": "pass (better)", "new": "new"}.get(top, "pass")


def _what_failed(rows: list[MetricVerdict], step: Step) -> str:
    """`graph breaks (new at model.py:144), eager step time`: each failing metric once (a
    percentile with its metric: the table below lists both), a new graph break with its
    file:line, so the first view holds where to look; then what was unclear or accepted."""
    names: list[str] = []
    for row in sorted_by_severity(rows):
        if row.verdict in w.FAILING:
            name = (
                w.metric_name(w.without_quantile(row.metric))
                if row.metric not in ("step", "variant")
                else w.verdict_word(row.verdict)
            )
            if name not in names:
                names.append(name)
    sites = list(dict.fromkeys(_new_break_sites(rows)))
    if sites and w.metric_name("graph_break_sites") in names:
        at = names.index(w.metric_name("graph_break_sites"))
        shown = ", ".join(sites[:2]) + (f" and {len(sites) - 2} more" if len(sites) > 2 else "")
        names[at] += f" (new at {shown})"
    unclear = sorted(
        {w.metric_name(w.without_quantile(r.metric)) for r in rows if r.verdict == "inconclusive"}
    )
    accepted = sorted({w.metric_name(r.metric) for r in rows if r.verdict == "accepted"})
    if accepted:
        names.append("accepted: " + ", ".join(accepted))
    if not rows and step.failed:
        names.append("the step failed")
    text = ", ".join(names)
    if unclear:
        text += ("; " if text else "") + "unclear: " + ", ".join(unclear)
    return text or "-"


def _new_break_sites(rows: list[MetricVerdict]) -> list[str]:
    """`model.py:144` of each failing row's new graph break, in the rows' order."""
    found = []
    for row in sorted_by_severity(rows):
        at = new_break_site(row)
        if at is not None and at.line is not None and row.verdict in w.FAILING:
            found.append(place_name(at))
    return found
