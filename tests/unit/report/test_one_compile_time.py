"""One compile time per result (issue 54, finding 3): torch 2.4.1 compiles cold in every
process, and `run` showed "compile s 123.3" (the geometric mean of two cold compiles, its
legend saying "mean") while `report` showed "compile 161.7 s" (the first). The compile time
is the first process's cold compile everywhere; the break-even's pooled figure is named as
what it is."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from decision_docs import measure, recommend
from decision_docs import variant as decided_variant
from gate_docs import environment, result, step, variant
from report_runs import judge

from compilegate.report.comment import render_comment
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse
from compilegate.results.recommendation import analyse

FIRST_S, SECOND_S = 161.7, 94.0  # the two cold compiles of issue 54's torch 2.4.1 run
POOLED_S = (FIRST_S * SECOND_S) ** 0.5  # 123.3: what the break-even divides


def two_cold_compiles(*cold_s: float) -> dict[str, Any]:
    """A variant of three processes whose first ones compiled cold (`cold_s`; torch 2.4 has no
    FX-graph cache), with the payoff a run records for it (results/document.finish_step)."""
    doc = variant(compile_s=cold_s[0])
    doc["processes"] = decided_variant("default", [1.3, 1.31, 1.29], warm_s=9.0)["processes"]
    for record, wall_s in zip(doc["processes"], cold_s):
        record.update(cache="cold", compile_wall_s=wall_s)
    doc["compile_cost"]["cold_samples"] = [{"wall_s": w, "cpu_s": w} for w in cold_s]
    doc["payoff"] = analyse(measure(doc), 10_000).to_json()
    return doc


def document() -> dict[str, Any]:
    return result(
        step("dit", variants=[two_cold_compiles(FIRST_S, SECOND_S)], device="cpu"),
        env=environment(torch="2.4.1+cpu", device="cpu", gpu_name=None, cuda=None),
    )


def test_run_and_report_show_the_same_compile_time(tmp_path: Path) -> None:
    doc = document()
    pooled = doc["steps"][0]["variants"][0]["payoff"]["compile_s"]["estimate"]
    assert pooled == pytest.approx(POOLED_S)  # what the run recorded for the break-even
    run = " ".join(render_run_text(parse(copy.deepcopy(doc), "r.json"), width=100).split())
    report = " ".join(render_run_set_text(judge(tmp_path / "r", None, head=doc)).split())
    comment = " ".join(render_comment(judge(tmp_path / "c", None, head=doc)).split())
    assert f"{FIRST_S:.1f}" in run and f"{POOLED_S:.1f}" not in run, run
    for shown in (report, comment):
        assert f"{FIRST_S:.1f} s" in shown.replace("\u00a0", " "), shown
        assert f"{POOLED_S:.1f}" not in shown, shown
    # each legend says exactly what the figure is, and what the break-even divides instead
    assert "compile s: mean of the cold compiles" not in run
    assert "compile s: the first process's cold compile in wall seconds" in run, run
    assert "break-even: the geometric mean of the variant's cold compiles (2 of them)" in run
    for shown in (report, comment):
        assert "compile: the first process's cold compile in wall seconds" in shown, shown


def test_the_decision_names_the_pooled_compile_for_what_it_is() -> None:
    text = recommend([two_cold_compiles(FIRST_S, SECOND_S)], 10_000)["text"]
    assert f"geometric mean of 2 cold compiles {POOLED_S:.0f} s" in text, text
    assert f"cold compile {POOLED_S:.0f} s" not in text, text


def test_one_cold_compile_is_the_compile_time_itself() -> None:
    doc = result(step("dit", variants=[two_cold_compiles(FIRST_S)], device="cpu"))
    run = " ".join(render_run_text(parse(doc, "r.json"), width=100).split())
    assert f"{FIRST_S:.1f}" in run and "break-even: compile s ÷ time saved per step" in run, run
    assert "geometric mean of the variant's cold compiles" not in run
