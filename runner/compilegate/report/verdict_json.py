"""The verdict as JSON (`compare --json`, `--out`, `report --json`, the run set a publish
writes): the gate's values, each row with its sentence (report/row_words/)."""

from __future__ import annotations

from typing import Any

from ..gate.run_set import RunSetVerdict
from ..gate.verdict import VerdictReport
from .note_words import notes_words, paired_summary
from .row_words import worded_row
from .wording import version_error


def verdict_json(report: VerdictReport) -> dict[str, Any]:
    """One comparison's verdict, each row with its `message`, its notes in words."""
    data = report.to_dict()
    data["notes"] = notes_words(report.notes)
    data["paired"] = paired_summary(report.paired) if report.paired is not None else None
    data["verdicts"] = [
        {**row.to_dict(), "message": worded_row(row).text()} for row in report.verdicts
    ]
    return data


def run_set_json(run_set: RunSetVerdict) -> dict[str, Any]:
    """A run set's verdict: each version's, each row with its `message`."""
    data = run_set.to_dict()
    for version, shown in zip(run_set.versions, data["versions"]):
        shown["error"] = version_error(version)
        if version.verdict is not None:
            shown["verdict"] = verdict_json(version.verdict)
    return data
