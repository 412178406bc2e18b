"""The diagnostics judge's facts (gate/judges/diagnostics.py) and their words
(report/row_words/diagnostics.py), for the branches the golden verdicts have no row of:
new sites within the allowance, more than one new site, a cause elsewhere, a site without
a line, a newly hit recompile limit, a fallback's reason, an accepted regression."""

from __future__ import annotations

import dataclasses

from gate_docs import judge_documents, recompile, result, site, step, variant

from compilegate.gate.judges.diagnostics import (
    BreakAt,
    FallbackFacts,
    GraphBreakFacts,
    Place,
    RecompileAt,
    RecompileFacts,
)
from compilegate.gate.verdict import Verdict
from compilegate.report.row_words import row_message
from compilegate.report.row_words.diagnostics import (
    break_reasons_said,
    count_detail,
    new_break_site,
)

LOOSE = {"graph_break_sites_increase": 5, "recompiles_increase": 5, "fallbacks_increase": 5}
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
FELL_BACK = f"forward in model.py fell back to eager: graph break at model.py:42 ({ITEM})"


def row_of(base_variant, cur_variant, metric, thresholds=None):
    baseline = result(step(variants=[base_variant], thresholds=thresholds))
    current = result(step(variants=[cur_variant], thresholds=thresholds))
    report = judge_documents(baseline, current)
    (row,) = [r for r in report.verdicts if r.metric == metric]
    return row


def test_a_new_site_is_a_fact_with_torchs_reason_and_where_it_was_caused():
    new = {**site("model.py", 42, ITEM), "cause": {"file": "util.py", "line": 7, "reason": ITEM}}
    row = row_of(variant(), variant(sites=[new]), "graph_break_sites")
    assert not hasattr(row, "message")  # every word is the report's
    assert row.facts == GraphBreakFacts(
        new=(BreakAt("model.py", 42, ITEM, Place("util.py", 7)),),
        gone=(),
        allowed_new=0,
        sites_before=0,
        sites_now=1,
    )
    assert row_message(row) == f"new graph break at model.py:42 (cause: util.py:7): {ITEM}"
    assert new_break_site(row) == Place("model.py", 42)
    assert break_reasons_said(row.facts) == (ITEM,)


def test_new_sites_within_the_allowance_say_so_and_name_three_more():
    sites = [site("model.py", 42, "print() in forward")]
    sites += [site("lib.py", line, "x") for line in (3, 4, 5, 6, 7)]
    row = row_of(variant(), variant(sites=sites), "graph_break_sites", LOOSE)
    assert row.verdict is Verdict.REGRESSION  # 6 new sites, 5 allowed
    assert row_message(row) == (
        "new graph break at model.py:42: print() in forward; and 5 more: lib.py:3, lib.py:4, "
        "lib.py:5"
    )
    row = row_of(variant(), variant(sites=sites[:2]), "graph_break_sites", LOOSE)
    assert row.verdict is Verdict.PASS
    assert row_message(row) == (
        "new graph break at model.py:42: print() in forward; and 1 more: lib.py:3 "
        "(within the allowed 5 new sites)"
    )


def test_a_site_without_a_line_is_named_by_its_file_and_links_nowhere():
    row = row_of(variant(), variant(sites=[site("model.py", None, "no line")]), "graph_break_sites")
    assert row_message(row) == "new graph break at model.py: no line"
    assert new_break_site(row) == Place("model.py", None)


def test_gone_sites_are_facts_too():
    gone = [site("model.py", 42, ITEM), site("loss.py", 7, "print")]
    row = row_of(variant(sites=gone), variant(sites=gone[:1]), "graph_break_sites")
    assert isinstance(row.facts, GraphBreakFacts)
    assert row.facts.gone == (BreakAt("loss.py", 7, "print"),) and row.facts.new == ()
    assert row_message(row) == "graph break gone: loss.py:7 (print)"
    assert break_reasons_said(row.facts) == ("print",)
    assert new_break_site(row) is None


def test_a_newly_hit_recompile_limit_and_the_first_new_recompile_are_said():
    events = [recompile("forward", "model.py", 51, "len(x) == 32"), recompile(line=None)]
    current = {**variant(), "recompiles": {"count": 2, "events": events, "limit_hit": True}}
    row = row_of(variant(), current, "recompiles")
    assert row.facts == RecompileFacts(
        0,
        2,
        0,
        new=(
            RecompileAt("forward", "model.py", 51, "len(x) == 32"),
            RecompileAt("forward", "model.py", None, "tensor 'x' size mismatch at index 1"),
        ),
        limit_newly_hit=True,
    )
    assert row_message(row) == (
        "recompiles 0 → 2 (allowed increase: 0); new: forward at model.py:51: len(x) == 32; "
        "the recompile limit was hit: that frame now runs eagerly"
    )


def test_a_recompile_without_a_line_is_named_by_its_file():
    facts = RecompileFacts(0, 1, 0, new=(RecompileAt("f", "m.py", None, "guard"),))
    assert count_detail(facts) == ["new: f at m.py: guard"]


def test_counts_within_the_allowance_and_unchanged():
    row = row_of(variant(), variant(recompiles=2), "recompiles", LOOSE)
    assert row_message(row) == "recompiles 0 → 2: within the allowed increase of 5"
    row = row_of(variant(fallbacks=1), variant(fallbacks=1), "fallbacks_to_eager")
    assert row_message(row) == "fallbacks to eager 1 → 1: unchanged"


def test_a_fallback_regression_gives_the_first_frames_reason_in_the_runs_words():
    current = variant(fallbacks=2, fallback_reasons=[FELL_BACK, "another frame"])
    row = row_of(variant(), current, "fallbacks_to_eager")
    assert row.facts == FallbackFacts(0, 2, 0, reasons=(FELL_BACK, "another frame"))
    assert row_message(row) == f"fallbacks to eager 0 → 2 (allowed increase: 0); {FELL_BACK}"
    # the first screen may leave out torch's words a graph break already said
    trimmed = count_detail(row.facts, lambda text: text.replace(f" ({ITEM})", ""))
    assert trimmed == ["forward in model.py fell back to eager: graph break at model.py:42"]


def test_an_accepted_regression_still_says_what_regressed():
    current = variant(sites=[site("model.py", 42, ITEM)], fallbacks=1, fallback_reasons=[FELL_BACK])
    for metric in ("graph_break_sites", "fallbacks_to_eager"):
        row = row_of(variant(), current, metric)
        accepted = dataclasses.replace(row, verdict=Verdict.ACCEPTED)
        assert row_message(accepted).startswith(row_message(row))
        assert "within the allowed" not in row_message(accepted)
