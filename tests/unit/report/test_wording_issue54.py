"""Issue 54, finding 10: five sentences that said the wrong thing.

- the paired comment's "If the change is intended, it is accepted by merging it" beside the
  label instruction (accepting is the label's);
- the stored-mode hint naming the scratch copy of the baseline given with --baseline, not
  the configured `.compilegate/baseline.json`;
- a headline that left out its failing "fallbacks to eager" row beside failing graph breaks;
- an upgrade report's header with one head commit for two results measured at different
  commits;
- a step that raised, with the run-health block printed all the same.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gate_docs import environment, result, site, step, variant
from report_runs import judge

from compilegate.report.comment import render_comment
from compilegate.report.first_screen import FirstScreen
from compilegate.report.headline import headline_of
from compilegate.report.judge_and_render import judge_result
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse

UNSTEADY = {
    "machine": {"cpu_count": 2, "others_cpu_pct": 61.0, "load_average_mean": 3.4},
    "gpu": None,
    "aa_noise_pct": 9.0,
    "yardstick_drift_pct": 12.0,
    "multi_threaded": False,
    "unsteady": ["other processes took 61 % of its CPU (load average 3.4 on 2 cores)"],
}


def flat(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())


def paired(document: dict[str, Any], role: str) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document["pairing"] = {"id": "p", "role": role, "base_label": "base", "head_label": "head"}
    return document


def test_the_paired_comment_leaves_accepting_to_the_label(tmp_path: Path) -> None:
    base = paired(result(step()), "base")
    head = paired(result(step(variants=[variant(fallbacks=1)])), "head")
    screen = flat(FirstScreen.of(judge(tmp_path, base, head=head)).text())
    assert 'with the label "compilegate: accept"' in screen, screen
    assert "accepted by merging" not in screen, screen
    assert "no stored baseline to refresh" in screen, screen


def test_the_stored_mode_hint_names_the_configured_baseline(tmp_path: Path) -> None:
    baseline = result(step())
    scratch = tmp_path / "scratch" / "baseline.json"
    head = result(step(variants=[variant(fallbacks=1)]))
    _, run_set = judge_result(
        parse(baseline, str(scratch), "baseline"),
        parse(head, "r.json", "result"),
        result_path="r.json",
        baseline_path=scratch,
        refresh_baseline=".compilegate/baseline.json",
    )
    text = render_run_text(run_set.versions[0].document, run_set=run_set)  # type: ignore[arg-type]
    assert "baseline update --result r.json --baseline .compilegate/baseline.json" in text, text
    assert f"baseline update --result r.json --baseline {scratch}" not in text, text


def test_the_headline_names_fallbacks_beside_failing_graph_breaks(tmp_path: Path) -> None:
    broken = variant(fallbacks=1, sites=[site("models.py", 122, "data-dependent branch")])
    _, headline = headline_of(judge(tmp_path, result(step()), head=result(step(variants=[broken]))))
    assert headline.startswith("fails on graph breaks and fallbacks to eager"), headline


def test_an_upgrade_report_shows_each_results_commit(tmp_path: Path) -> None:
    baseline = result(step(), env=environment(torch="2.4.1+cpu", commit="aaaaaaa1"))
    old = result(step(), env=environment(torch="2.4.1+cpu", commit="bbbbbbb2"))
    new = result(step(), env=environment(torch="2.13.0+cpu", commit="ccccccc3"))
    run_set = judge(tmp_path, baseline, old=old, new=new)
    for shown in (flat(render_run_set_text(run_set)), flat(render_comment(run_set))):
        context = shown.split("torch 2.4.1, 2.13.0", 1)[0]
        assert "bbbbbbb" in context and "ccccccc" in context, context
        assert "(torch 2.4.1)" in context and "(torch 2.13.0)" in context, context


def test_a_step_that_raised_prints_no_run_health(tmp_path: Path) -> None:
    raised = result(step(status="error", error="RuntimeError: boom (at models.py:57)"))
    raised["run_health"] = UNSTEADY
    text = render_run_text(parse(raised, "r.json"))
    assert "run health" not in text and "boom" in text, text
    measured = result(step())
    measured["run_health"] = UNSTEADY
    assert "run health" in render_run_text(parse(measured, "r.json"))
    comment = render_comment(judge(tmp_path, result(step()), head=raised))
    assert "run health" not in comment.split("<details>", 1)[0], comment
