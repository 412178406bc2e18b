"""The terminal and the comment say the same things by construction: `compilegate run`,
`compilegate report` (text) and the PR comment draw their attention rows and reasons from
one screen model (report/first_screen/), checked on every golden pair that has any."""

from __future__ import annotations

import json
import re

import pytest
from golden_verdicts import VERDICTS, read_document, stored_documents

from compilegate.gate.compare import compare_to_baseline
from compilegate.report.comment import render_comment
from compilegate.report.first_screen import AttentionTable, FirstScreen, reason_line
from compilegate.report.judge_and_render import one_version_run_set
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse

GOLDEN = json.loads(VERDICTS.read_text(encoding="utf-8"))
PATHS = stored_documents()
# Pairs whose comparison has a row that needs a look (the screen then has attention rows).
WITH_ATTENTION = sorted(
    pair
    for pair, entry in GOLDEN.items()
    if any(row["verdict"] not in ("pass", "new", "skipped", "improvement") for row in entry["rows"])
)


def _flat(text: str) -> str:
    """Words only: no table bars, markdown marks, wrapping or no-break spaces."""
    text = text.replace("\u00a0", " ").replace("\u200b", "")
    text = re.sub(r"[|*_`\\]", " ", text)
    return " ".join(text.split())


def _outputs(pair: str) -> tuple[FirstScreen, dict[str, str]]:
    base_name, _, result_name = pair.partition(" | ")
    baseline = parse(read_document(PATHS[base_name], "baseline"), "b.json", "baseline")
    result = parse(read_document(PATHS[result_name], "result"), "r.json", "result")
    run_set = one_version_run_set(
        compare_to_baseline(baseline, result), result, baseline, ("r.json", "b.json")
    )
    outputs = {
        "run": render_run_text(result, run_set=run_set, width=100),
        "report": render_run_set_text(run_set),
        "comment": render_comment(run_set),
    }
    return FirstScreen.of(run_set), {name: _flat(text) for name, text in outputs.items()}


def test_the_golden_set_has_screens_with_attention_rows():
    assert len(WITH_ATTENTION) > 50


@pytest.mark.parametrize("pair", WITH_ATTENTION[::7])
def test_run_report_and_comment_show_the_same_attention_rows_and_reasons(pair):
    screen, outputs = _outputs(pair)
    assert screen.attention
    table = AttentionTable.of(screen.attention, screen.attention_with_torch)
    for name, text in outputs.items():
        assert _flat(table.title()) in text, (name, table.title())
        for row in table.rows:
            for cell in row:
                assert _flat(cell) in text, (name, cell)
        for reason in screen.reasons:
            said = reason_line(reason)
            assert _flat(said)[:80] in text, (name, said)
