"""The compile-cost and step-work facts (gate/judges/compile_cost.py, step_work.py) and their
words (report/row_words/compile_cost.py, step_work.py), for the branches the golden verdicts
have no row of: wall time gated (under the floor, on its threshold, by the noise rule), CPU
time warm on both sides or paired, compile work per op, across torch versions and under
max-autotune, the counts the first screen's reasons name, step work's host syncs and its
counts judged across torch versions, an accepted regression, and the facts in the JSON."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

from gate_docs import environment, judge_documents, result, step, variant
from test_compile_cost_judge import STEADY, compile_cost, judge
from test_step_work_judge import rows as step_work_rows
from test_step_work_judge import work

from compilegate.gate.judges.compile_cost import (
    CompileCpuFacts,
    CompileWallFacts,
    CompileWorkFacts,
    CountChange,
    CpuJudgement,
    UngatedCounts,
    UngatedWhy,
    WallJudgement,
    WorkJudgement,
)
from compilegate.gate.judges.step_work import StepWorkFacts, StepWorkJudgement
from compilegate.gate.rules import Side
from compilegate.gate.verdict import Acceptance, MetricVerdict, Verdict
from compilegate.report.row_cells import row_cells
from compilegate.report.row_words import row_message, worded_row
from compilegate.report.row_words.compile_cost import CountMoved, counts_past_limit

SHOWN = "compile time 10.0 s → 14.0 s (+4.0 s, +40.0 %)"


def row_of(metric: str, verdict: Verdict, facts, **fields) -> MetricVerdict:
    return MetricVerdict("train", "default", metric, verdict, facts=facts, **fields)


# -- wall seconds -----------------------------------------------------------------------------


def test_gated_wall_time_says_how_it_was_judged():
    def words(judged, verdict, noise=None, cur_s=14.0):
        change = (cur_s - 10.0) / 10.0 * 100
        facts = CompileWallFacts(10.0, cur_s, change, judged, 25.0, noise_pct=noise)
        return row_message(row_of("compile_s", verdict, facts))

    assert words(WallJudgement.UNDER_FLOOR, Verdict.PASS, cur_s=10.5) == (
        "compile time 10.0 s → 10.5 s (+0.5 s, +5.0 %): changes under 1 s are ignored"
    )
    assert words(WallJudgement.THRESHOLD, Verdict.REGRESSION) == (
        f"{SHOWN}: grew by more than the 25 % threshold"
    )
    assert words(WallJudgement.NOISE_RULE, Verdict.REGRESSION, noise=3.0) == (
        f"{SHOWN}: worse by more than the 25 % threshold and the ±3.0 % noise of both runs' "
        "cold compiles"
    )


def test_wall_time_judged_by_the_noise_rule_where_the_policy_gates_it():
    docs = []
    for wall_s in (10.0, 20.0):
        cost = compile_cost(cold_cpu_s=STEADY)
        cost["wall_s"] = wall_s
        cost["cold_samples"] = [{"wall_s": wall_s * f, "cpu_s": 20.0} for f in (1, 1.02, 0.98)]
        gated = {"gate_compile_wall_time": True}
        docs.append(
            result(step(variants=[variant(compile_s=wall_s, compile_cost=cost)], settings=gated))
        )
    row = next(r for r in judge_documents(*docs).verdicts if r.metric == "compile_s")
    assert isinstance(row.facts, CompileWallFacts)
    assert row.facts.judged is WallJudgement.NOISE_RULE and row.facts.noise_pct is not None
    assert row.verdict == "regression" and row.gated
    assert "worse by more than the 25 % threshold" in row_message(row)


# -- CPU seconds ------------------------------------------------------------------------------


def test_cpu_time_warm_on_both_sides_names_both():
    facts = CompileCpuFacts(
        CpuJudgement.WARM_CACHE, 30.0, 20.0, 50.0, 50.0, warm_sides=(Side.BASELINE, Side.RUN)
    )
    assert row_message(row_of("compile_cpu_s", Verdict.PASS, facts)) == (
        "compile CPU time 20.0 s → 30.0 s (+50.0 %): reported, not judged: the baseline and "
        "this run compiled from a shared, warm Inductor cache (--inductor-cache), not cold"
    )


def test_paired_cpu_time_counts_pairs_of_cold_compiles():
    facts = CompileCpuFacts(CpuJudgement.NOISE_RULE, 21.0, 20.0, 5.0, 50.0, 4.0, (4, 4), True)
    assert row_message(row_of("compile_cpu_s", Verdict.PASS, facts)) == (
        "compile CPU time 20.0 s → 21.0 s (+5.0 %, geometric means of 4 pairs of cold "
        "compiles): within the 50 % threshold (noise ±4.0 %)"
    )


def test_an_accepted_regression_keeps_its_words_and_says_who_accepted_it():
    facts = CompileCpuFacts(CpuJudgement.NOISE_RULE, 40.0, 20.0, 100.0, 50.0, 4.0, (4, 4))
    row = row_of("compile_cpu_s", Verdict.REGRESSION, facts)
    by = Acceptance("compilegate: accept", "maintainer", "0123456789abcdef")
    accepted = dataclasses.replace(row, verdict=Verdict.ACCEPTED, accepted_by=by)
    assert row_message(accepted) == (
        f'{row_message(row)}; accepted by @maintainer (label "compilegate: accept") at 0123456789ab'
    )
    assert "worse by more than the 50 % threshold" in row_message(accepted)


# -- work counts ------------------------------------------------------------------------------


def test_per_op_counts_under_max_autotune_say_size_and_what_is_not_gated():
    base = compile_cost(guards=300, generated_kernels=40)
    cur = compile_cost(guards=330, generated_kernels=90)
    base["eager_ops"], cur["eager_ops"] = 400, 400
    _, rows = judge(base, cur, cur_mode="max-autotune")
    row = rows["compile_work"]
    facts = row.facts
    assert isinstance(facts, CompileWorkFacts)
    assert facts.ungated == (UngatedCounts(UngatedWhy.AUTOTUNING, ("generated_kernels",)),)
    assert facts.eager_ops == (400, 400) and row.verdict == "regression"
    assert row_message(row) == (
        "compile work: guards 300 → 330 (0.75 → 0.825 per op), generated kernels 40 → 90 "
        "(0.1 → 0.225 per op): grew by more than the 5 % tolerance (deterministic counts); "
        "the compiled region ran 400 → 400 ATen ops eager: FX nodes, guards and kernels are "
        "judged per op, graphs and compile records as counts; generated kernels not gated: "
        "autotuning may pick another kernel mix"
    )


def test_across_torch_versions_the_row_names_both_versions():
    cur = compile_cost(cold_cpu_s=STEADY, guards=400)
    _, rows = judge(compile_cost(cold_cpu_s=STEADY), cur, torch="2.11.0+cu128")
    facts = rows["compile_work"].facts
    assert isinstance(facts, CompileWorkFacts)
    assert facts.torch_versions == ("2.10.0+cu128", "2.11.0+cu128")
    assert facts.ungated == (UngatedCounts(UngatedWhy.ACROSS_TORCH),)
    assert row_message(rows["compile_work"]).endswith(
        "; reported, not gated across torch versions (torch 2.10.0+cu128 → 2.11.0+cu128): "
        "each version counts its own way; compile CPU time judges the upgrade"
    )


def test_the_counts_not_measured_in_this_run_are_named():
    facts = CompileWorkFacts(WorkJudgement.NOT_MEASURED, unmeasured=("guards", "fx_nodes"))
    assert row_message(row_of("compile_work", Verdict.MISSING, facts)) == (
        "compile-work counts: guards, FX nodes not measured in this run"
    )


def test_the_reason_and_the_cell_name_the_counts_past_the_limit():
    changes = (
        CountChange("graphs", 1, 5, 400.0),
        CountChange("fx_nodes", 100, 120, -4.0, (0.25, 0.24)),
    )
    facts = CompileWorkFacts(WorkJudgement.JUDGED, changes, 5.0, (400, 500))
    row = row_of(
        "compile_work",
        Verdict.REGRESSION,
        facts,
        unit="count",
        baseline=1,
        current=5,
        change=400.0,
        threshold=5.0,
        change_unit="pct",
    )
    past = counts_past_limit(row)
    assert past is not None
    # Each count's raw change, as the cell shows it: FX nodes grew by 20 % raw.
    assert past.counts == (CountMoved("graphs", 1, 5), CountMoved("FX nodes", 100, 120))
    assert past.why.endswith(": grew by more than the 5 % tolerance (deterministic counts)")
    assert counts_past_limit(dataclasses.replace(row, verdict=Verdict.PASS)) is None
    version = SimpleNamespace(torch="2.10.0", label="torch 2.10.0")
    assert row_cells(version, row, worded_row(row), False)[2] == "graphs 1 → 5"


# -- step work --------------------------------------------------------------------------------


def test_step_work_across_torch_versions_says_which_counts_are_judged():
    _, judged = step_work_rows(work(), work(allocations=60), torch="2.11.0+cu128")
    eager, compiled = judged["eager"].facts, judged["default"].facts
    assert isinstance(eager, StepWorkFacts) and isinstance(compiled, StepWorkFacts)
    assert eager.across_torch == ("host_syncs", "aten_ops", "flops")
    assert compiled.across_torch == ("host_syncs", "flops")
    assert row_message(judged["eager"]).endswith(
        "; across torch versions only ATen ops, FLOPs and host syncs are judged: each "
        "version's compiler, launches and allocator work their own way"
    )
    assert "only FLOPs and host syncs are judged" in row_message(judged["default"])
    assert row_message(judged["default"]).startswith("step work: allocations 40 → 60: reported")


def test_fewer_host_syncs_and_fewer_ops_are_an_improvement_that_says_both():
    base = work(host_syncs=2, aten_ops=200, names_host_syncs=[["aten::_local_scalar_dense", 2]])
    base["sync_sites"] = [["model.py:106", 1], ["model.py:107", 1]]
    cur = work(host_syncs=0, aten_ops=113, names_host_syncs=[])
    cur["sync_sites"] = []
    _, judged = step_work_rows(base, cur)
    row = judged["eager"]
    assert row.verdict == "improvement"
    assert isinstance(row.facts, StepWorkFacts)
    assert row.facts.past_tolerance == ("host_syncs", "aten_ops")
    assert row_message(row) == (
        "step work: host syncs 2 → 0 (-2 aten::_local_scalar_dense, .item() at "
        "model.py:106 -1, model.py:107 -1); ATen ops 200 → 113: fewer host syncs per step; "
        "fell by more than the 2 % tolerance (counted, not timed)"
    )


def test_step_work_not_counted_on_both_sides_says_so():
    facts = StepWorkFacts(StepWorkJudgement.NO_COMMON_COUNT)
    assert row_message(row_of("step_work", Verdict.PASS, facts)) == (
        "step work: no count taken on both sides"
    )


# -- the facts in the verdict JSON ------------------------------------------------------------


def test_the_facts_travel_in_the_json_as_values():
    base = result(step(variants=[variant(compile_cost=compile_cost())]))
    cur = result(
        step(variants=[variant(compile_cost=compile_cost(guards=400))]),
        env=environment(torch="2.11.0+cu128"),
    )
    report = judge_documents(base, cur)
    by_metric = {r.metric: json.loads(json.dumps(r.to_dict())) for r in report.verdicts}
    work_facts = by_metric["compile_work"]["facts"]
    assert work_facts["kind"] == "compile_work" and work_facts["judged"] == "judged"
    assert {"name": "guards", "before": 199, "after": 400}.items() <= next(
        c for c in work_facts["changes"] if c["name"] == "guards"
    ).items()
    assert work_facts["ungated"] == [{"why": "not_gated_across_torch", "names": []}]
    assert by_metric["compile_cpu_s"]["facts"]["judged"] == "no_noise_estimate"
    assert by_metric["compile_s"]["facts"]["judged"] == "not_gated"
