"""report/degraded_words.py: the keys of a child's diagnostics that were refused because they
named what was measured are recorded as keys (`refused_diagnostics`, results/document.py) and
worded here; every screen says them as it said the note an older document recorded in
`degraded` (issue 53)."""

from __future__ import annotations

from typing import Any

import pytest
from decision_docs import typed
from decision_docs import variant as measured_variant
from gate_docs import judge_documents, result, step, variant

from compilegate.report.decision_words import decision_sentence
from compilegate.report.row_words import row_message
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse
from compilegate.results.recommendation import recommend
from compilegate.schemas import validation_errors

KEYS = ["speedup", "step_ms"]
OLD_NOTE = "diagnostics tried to overwrite measured keys: speedup, step_ms"


def _document(degraded: list[str], refused: list[str] | None) -> dict[str, Any]:
    """A step whose variant pays off, its recommendation recorded from it."""
    entry = {**variant(), **measured_variant("default", [1.6] * 4, degraded=degraded)}
    if refused is not None:
        entry["refused_diagnostics"] = refused
    doc = result(step("train", variants=[entry]))
    advice = recommend(typed([entry]), 10_000)
    doc["steps"][0]["recommendation"] = advice.to_json(as_recorded=True)
    assert validation_errors(doc, "result") == []
    return doc


@pytest.mark.parametrize("child_said", [[], ["2 graph breaks in your code (model.py:3 print)"]])
def test_refused_keys_are_said_as_the_older_note_said_them(child_said: list[str]) -> None:
    recorded = parse(_document(child_said, KEYS), "result.json")
    older = parse(_document([*child_said, OLD_NOTE], None), "result.json")
    said = decision_sentence(recorded.steps[0])
    assert said == decision_sentence(older.steps[0])
    assert said is not None and "but not wholly compiled" in said
    text = render_run_text(recorded)
    assert text == render_run_text(older)
    assert f"default: not wholly compiled: {OLD_NOTE}" in text


def test_a_diagnostic_lacking_beside_refused_keys_says_they_were_refused() -> None:
    cur = variant()
    cur.update(recompiles=None, refused_diagnostics=["recompiles", "speedup"])
    report = judge_documents(result(), result(step(variants=[cur])))
    missing = [r for r in report.verdicts if r.verdict == "missing"]
    assert [r.metric for r in missing] == ["recompiles"]
    assert "(diagnostics tried to overwrite measured keys: recompiles, speedup)" in row_message(
        missing[0]
    )
