"""report/version_said.py: each version's gate rows said once, and laid out alike by the
comment's details and the terminal's report (issue 53, item 7)."""

from __future__ import annotations

from pathlib import Path

from report_runs import two_versions_failing

from compilegate.gate.verdict import sorted_by_severity
from compilegate.report.comment import render_comment
from compilegate.report.escape import cell, inert, with_code
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.version_said import said_version


def test_each_gate_row_is_said_once_and_laid_out_alike_in_the_comment_and_the_terminal(
    tmp_path: Path,
):
    """Two versions failing alike (a new graph break, compile work grown, speed dropped):
    every gate row of each, most severe first, with its sentence unless it passed; the
    comment's every-gate-row table and the terminal's show those cells, and both give each
    sentence under it."""
    run_set = two_versions_failing(tmp_path)
    comment = render_comment(run_set)
    terminal = render_run_set_text(run_set)
    for version in run_set.versions:
        said = said_version(version, run_set)
        assert said is not None and said.judged and version.verdict is not None
        rows = sorted_by_severity(version.verdict.verdicts)
        assert [r.message is None for r in said.gate_rows] == [r.verdict == "pass" for r in rows]
        assert any(r.message for r in said.gate_rows)
        for row in said.gate_rows:
            assert "| " + " | ".join(cell(c) for c in row.cells) + " |" in comment
            if row.message is not None:
                said_md = f"- {inert(row.subject)}: {with_code(row.message, max_chars=400)}"
                assert said_md in comment
                assert f"- {row.subject}: {row.message.split()[0]}" in terminal
