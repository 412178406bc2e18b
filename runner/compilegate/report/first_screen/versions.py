"""The versions table of the first screen: one row per torch version × step — its gate,
what failed (a new graph break with its file:line), compiled vs eager (best) and when
compiling pays off; one row per version past VERSION_ROWS_SHOWN rows."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

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


class _Gate(Enum):
    """How a step went, as the versions table's gate cell says it."""

    ERROR = "error"  # it failed to run
    FAILS = "fails"
    UNCLEAR = "unclear"
    ACCEPTED = "accepted"
    BETTER = "better"
    NEW = "new"
    PASS = "pass"
    MEASURED = "measured"  # not judged: no baseline
    NONE = "none"  # no gate row about it


GATE_WORDS = {
    _Gate.ERROR: f"{w.FAIL_ICON} error",
    _Gate.FAILS: f"{w.FAIL_ICON} fails",
    _Gate.UNCLEAR: f"{w.LOOK_ICON} unclear",
    _Gate.ACCEPTED: "accepted",
    _Gate.BETTER: "pass (better)",
    _Gate.NEW: "new",
    _Gate.PASS: "pass",
    _Gate.MEASURED: "measured",
    _Gate.NONE: "-",
}
_FAILED = (_Gate.ERROR, _Gate.FAILS)


@dataclass(frozen=True)
class _StepRow:
    """One row of the versions table: how its step went, and its cells."""

    gate: _Gate
    cells: tuple[str, ...]


def version_rows(run_set: RunSetVerdict) -> list[tuple[str, ...]]:
    rows = [row.cells for version in run_set.versions for row in _step_rows(version)]
    if len(rows) <= VERSION_ROWS_SHOWN:
        return rows
    return [_version_summary(version) for version in run_set.versions]


def _version_summary(version: VersionOutcome) -> tuple[str, ...]:
    """One row for a whole version: its worst gate and the steps that failed."""
    rows = _step_rows(version)
    label = rows[0].cells[0]
    if version.document is None:
        return rows[0].cells
    failed = [r.cells for r in rows if r.gate in _FAILED]
    unclear = [r.cells for r in rows if r.gate is _Gate.UNCLEAR]
    gate = (failed or unclear or [r.cells for r in rows])[0][2]
    what = "; ".join(f"{r[1]}: {r[3]}" for r in (failed or unclear)[:3])
    if len(failed or unclear) > 3:
        what += f"; and {len(failed or unclear) - 3} more steps"
    return (label, f"{len(rows)} steps", gate, what or "-", "per step: see details", "-")


def _step_rows(version: VersionOutcome) -> list[_StepRow]:
    label = version_label(version)
    if version.document is None:
        error = w.version_error(version) or "no result"
        return [_StepRow(_Gate.ERROR, (label, "-", GATE_WORDS[_Gate.ERROR], error, "-", "-"))]
    rows: list[_StepRow] = []
    by_step: dict[str, list[MetricVerdict]] = {}  # one pass: a result may hold 100,000 steps
    for verdict in version.verdict.verdicts if version.verdict is not None else ():
        by_step.setdefault(verdict.step, []).append(verdict)
    for index, step in enumerate(version.document.steps):
        mine = by_step.get(step.name, [])
        gate = _gate(version, mine, step)
        cells = (
            label if index == 0 else "",
            step.name,
            GATE_WORDS[gate],
            _what_failed(mine, step),
            best_speed_text(step),
            pays_off_text(step),
        )
        rows.append(_StepRow(gate, cells))
    return rows


def _gate(version: VersionOutcome, rows: list[MetricVerdict], step: Step) -> _Gate:
    if version.verdict is None:
        return _Gate.ERROR if step.failed else _Gate.MEASURED
    if not rows:
        return _Gate.NONE
    top = sorted_by_severity(rows)[0].verdict
    if top in w.FAILING:
        return _Gate.FAILS
    if top == "inconclusive":
        return _Gate.UNCLEAR
    if top == "accepted":
        return _Gate.ACCEPTED
    return {"improvement": _Gate.BETTER, "new": _Gate.NEW}.get(top, _Gate.PASS)


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
