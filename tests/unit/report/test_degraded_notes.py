"""report/degraded_notes.py: since issue 53 the child records each frame that fell back to
eager (`fallbacks`) and the recompile limit it hit (`recompiles.limit`) as facts, and the
report words the degraded notes and the fallback reasons from them; an older document's
sentences (`degraded`, `fallback_reasons`) are said as recorded. Each screen says a new
document as it said the older one whose sentences the child composed from the same facts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gate_docs import result, step, variant

from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.comment import render_comment
from compilegate.report.degraded_notes import degraded_notes, fallback_reasons, placed_notes
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse
from compilegate.schemas import validation_errors

LIMIT = {
    "name": "recompile_limit",
    "value": 8,
    "function": "forward",
    "file": "model.py",
    "line": 20,
    "reason": "tensor 'x' size mismatch at index 0. expected 8, actual 16",
}
FALLBACKS = [
    {
        "function": "step",
        "file": "train.py",
        "kind": "graph_break",
        "line": 12,
        "type": "Unsupported Tensor.item() call",
    },
    {
        "function": "forward",
        "file": "loop.py",
        "kind": "loop",
        "line": 30,
        "type": "builtin: print [Const] False",
    },
    {"file": "gen.py", "kind": "failed", "type": "Failed to trace builtin operator"},
    {"function": "forward", "file": "model.py", "kind": "limit"},
]


def _site(
    file: str, line: int, origin: str, reason: str, cause: tuple[str, int] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"file": file, "line": line, "origin": origin, "reason": reason}
    out.update(count=1, in_repo=origin == "repo")
    if cause is not None:
        out["cause"] = {"file": cause[0], "line": cause[1], "reason": reason}
    return out


SITES = [
    _site("train.py", 12, "repo", "Unsupported Tensor.item() call. Dynamo does not know how"),
    _site("model.py", 50, "repo", "Data-dependent branching", cause=("util.py", 7)),
    _site("model.py", 60, "repo", "print", cause=("model.py", 60)),
    _site("model.py", 70, "repo", "print"),
    _site("transformers/x.py", 9, "library", "logging.Logger method not supported"),
    _site("torch/y.py", 3, "torch", "skip"),
]
# What the child wrote for these facts before issue 53 (child/diagnostics_report.py at 5a5d0e2).
OLD_FALLBACK_REASONS = [
    "step in train.py fell back to eager: graph break at train.py:12 (Unsupported Tensor.item() "
    "call)",
    "forward in loop.py fell back to eager: graph break in a loop at loop.py:30 (builtin: "
    "print [Const] False)",
    "a frame in gen.py fell back to eager: Failed to trace builtin operator",
    "forward in model.py fell back to eager: recompile limit hit (config.recompile_limit = 8)",
]
LIMIT_MESSAGE = (
    "recompile limit hit: forward (model.py:20) runs eagerly from now on (config.recompile_limit"
    " = 8; last reason: tensor 'x' size mismatch at index 0. expected 8, actual 16)"
)
OLD_DEGRADED = [
    "4 graph breaks in your code (train.py:12 Unsupported Tensor.item() call; model.py:50 -> "
    "util.py:7 Data-dependent branching; model.py:60 print; and 1 more)",
    "1 graph break in installed libraries (transformers/x.py:9 logging.Logger method not "
    "supported)",
    *OLD_FALLBACK_REASONS[:3],
    "2 frame(s) fell back to eager (torch gave no reason)",
    LIMIT_MESSAGE,
]


def _variants(*, facts: bool) -> list[dict[str, Any]]:
    """The degraded variant as a run of this checkout records it (`facts`), or as an older
    run recorded the same compile (its sentences), beside one wholly compiled."""
    degraded = variant("max-autotune", sites=SITES, fallbacks=6, mode="max-autotune")
    degraded["recompiles"]["limit_hit"] = True
    if facts:  # since issue 53's last items the child writes no limit_message
        degraded["recompiles"]["limit"] = LIMIT
        degraded["fallbacks"] = FALLBACKS
    else:
        degraded.update(degraded=OLD_DEGRADED, fallback_reasons=OLD_FALLBACK_REASONS)
        degraded["recompiles"]["limit_message"] = LIMIT_MESSAGE
    return [variant(), degraded]


def _documents(*, facts: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    baseline = result(step(variants=[variant(), variant("max-autotune", mode="max-autotune")]))
    current = result(step(variants=_variants(facts=facts)))
    assert validation_errors(current, "result") == []
    return baseline, current


def _screens(where: Path, *, facts: bool) -> dict[str, str]:
    baseline_raw, current_raw = _documents(facts=facts)
    baseline = parse(baseline_raw, "baseline.json", "baseline")
    current = parse(current_raw, "result.json", "result")
    path = where / "result.json"
    path.write_text(json.dumps(current_raw), encoding="utf-8")
    run_set = judge_run_set([ResultSource(path, "head")], baseline, "baseline.json")
    return {
        "comment": render_comment(run_set),
        "report": render_run_set_text(run_set),
        "run": render_run_text(current, run_set=run_set),
        "run alone": render_run_text(current),
    }


def test_a_document_with_facts_says_what_the_childs_sentences_said() -> None:
    _, raw = _documents(facts=True)
    degraded = parse(raw, "result.json", "result").steps[0].variants[1]
    assert degraded.degraded is None and degraded.fallback_reasons is None
    assert list(degraded_notes(degraded)) == OLD_DEGRADED
    assert list(fallback_reasons(degraded)) == OLD_FALLBACK_REASONS
    assert degraded.not_wholly_compiled


def test_an_older_document_is_said_as_recorded() -> None:
    _, raw = _documents(facts=False)
    older = parse(raw, "result.json", "result").steps[0].variants[1]
    older = older.__class__(**{**older.__dict__, "degraded": ("as recorded",)})
    assert degraded_notes(older) == ("as recorded",)
    assert [note.places for note in placed_notes(older)] == [None]  # found in its text


def test_each_screen_says_a_new_document_as_it_said_the_older_one(tmp_path: Path) -> None:
    new = _screens(tmp_path, facts=True)
    old = _screens(tmp_path, facts=False)  # the same path: the screens name it
    assert new == old
    assert "not wholly compiled" in new["run alone"]
    # the first screen leaves out the break's type its graph-break reason quotes already
    assert "fell back to eager: graph break at train.py:12\n" in new["report"]


def test_the_places_a_note_names_are_its_facts() -> None:
    _, raw = _documents(facts=True)
    notes = placed_notes(parse(raw, "result.json", "result").steps[0].variants[1])
    assert [note.places for note in notes] == [
        ("train.py:12", "model.py:50", "util.py:7", "model.py:60"),
        ("transformers/x.py:9",),
        ("train.py:12",),
        ("loop.py:30",),
        (),
        (),
        ("model.py:20",),
    ]


def test_a_variant_without_breaks_or_fallbacks_is_wholly_compiled() -> None:
    raw = copy.deepcopy(variant())
    raw["fallbacks"] = []
    whole = parse(result(step(variants=[raw])), "result.json", "result").steps[0].variants[0]
    assert not whole.not_wholly_compiled and degraded_notes(whole) == ()
