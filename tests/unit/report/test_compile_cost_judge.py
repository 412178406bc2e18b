"""Compile cost judged three ways (gate/judges/compile_cost.py): the work counts against a
small tolerance whatever the load, CPU seconds against their own noise, wall seconds only
where the baseline's policy gates them."""

from __future__ import annotations

import pytest
from gate_docs import compile_cost as cost_doc
from gate_docs import environment, judge_documents, result, step, variant

from compilegate.errors import EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSION, BaselineError
from compilegate.report.row_words import row_message

STEADY = [20.0, 21.0, 20.5, 19.8]  # four cold compiles' CPU seconds
# The MLP on torch 2.13: identical in every run, idle or loaded.
MLP = {
    "graphs": 1,
    "fx_nodes": 33,
    "guards": 199,
    "generated_kernels": 61,
    "compile_records": 2,
    "backward_compile_records": 1,
}


def compile_cost(
    cpu_s: float = 20.0,
    *,
    cold_cpu_s: list[float] | None = None,
    cpu_noise_pct: float | None = None,
    **counts: int | None,
) -> dict:
    return cost_doc(
        10.0,
        cpu_s=cpu_s,
        counts={**MLP, **counts},
        cold_cpu_s=cold_cpu_s,
        cpu_noise_pct=cpu_noise_pct,
    )


def judge(base_cost, cur_cost, *, base_settings=None, cur_mode="default", **env):
    base = step(variants=[variant(compile_cost=base_cost)], settings=base_settings)
    cur_variant = variant(compile_cost=cur_cost, mode=cur_mode)
    base_variant = base["variants"][0]
    base_variant["mode"] = cur_mode
    if base_cost is None:
        del base_variant["compile_cost"]
    if cur_cost is None:
        del cur_variant["compile_cost"]
    cur_env = environment(**env) if env else None
    report = judge_documents(result(base), result(step(variants=[cur_variant]), env=cur_env))
    return report, {r.metric: r for r in report.verdicts if r.variant == "default"}


def test_unchanged_compile_cost_passes_every_row():
    report, rows = judge(compile_cost(cold_cpu_s=STEADY), compile_cost(cold_cpu_s=STEADY))
    assert rows["compile_work"].verdict == "pass" and rows["compile_work"].gated
    assert "every count as in the baseline" in row_message(rows["compile_work"])
    assert rows["compile_cpu_s"].verdict == "pass"
    assert report.exit_code == EXIT_OK


def test_more_compile_work_is_a_regression_whatever_the_load():
    """A compile-only plant: 300 more FX nodes and 40 more kernels, CPU time inside its noise."""
    cur = compile_cost(cold_cpu_s=STEADY, fx_nodes=333, generated_kernels=101)
    report, rows = judge(compile_cost(cold_cpu_s=STEADY), cur)
    row = rows["compile_work"]
    assert row.verdict == "regression" and report.exit_code == EXIT_REGRESSION
    assert "FX nodes 33 → 333" in row_message(row) and "generated kernels 61 → 101" in row_message(
        row
    )
    assert (row.baseline, row.current) == (33, 333)
    assert row.change == pytest.approx(909.1, abs=0.1)


def test_growth_within_the_tolerance_passes_and_a_drop_is_an_improvement():
    _, rows = judge(compile_cost(guards=199), compile_cost(guards=204))  # +2.5 %
    assert rows["compile_work"].verdict == "pass"
    _, rows = judge(compile_cost(), compile_cost(fx_nodes=20, generated_kernels=40))
    assert rows["compile_work"].verdict == "improvement"


def test_one_more_graph_is_beyond_any_percentage_of_nothing():
    _, rows = judge(compile_cost(graphs=1), compile_cost(graphs=2))
    assert rows["compile_work"].verdict == "regression"


def test_the_tolerance_is_the_baselines():
    loose = {"thresholds": {"compile_work_growth_pct": 50.0}}
    _, rows = judge(compile_cost(), compile_cost(fx_nodes=40), base_settings=loose)
    assert (rows["compile_work"].verdict, rows["compile_work"].threshold) == ("pass", 50.0)


def test_a_count_the_baselines_torch_lacks_holds_this_run_to_nothing():
    base = compile_cost(guards=None, generated_kernels=None)
    _, rows = judge(base, compile_cost(guards=900, generated_kernels=900))
    assert rows["compile_work"].verdict == "pass"


def test_a_count_this_run_lost_is_missing():
    report, rows = judge(compile_cost(), compile_cost(guards=None))
    assert rows["compile_work"].verdict == "missing" and "guards" in row_message(
        rows["compile_work"]
    )
    assert report.exit_code == EXIT_NOT_JUDGED


def test_across_torch_versions_the_counts_are_reported_not_gated():
    cur = compile_cost(cold_cpu_s=STEADY, guards=400)
    report, rows = judge(compile_cost(cold_cpu_s=STEADY), cur, torch="2.11.0+cu128")
    row = rows["compile_work"]
    assert (row.verdict, row.gated) == ("pass", False)
    assert "guards 199 → 400" in row_message(
        row
    ) and "not gated across torch versions" in row_message(row)
    assert report.exit_code == EXIT_OK


def test_generated_kernels_are_not_gated_under_max_autotune():
    _, rows = judge(compile_cost(), compile_cost(generated_kernels=70), cur_mode="max-autotune")
    assert rows["compile_work"].verdict == "pass"
    assert "generated kernels not gated" in row_message(rows["compile_work"])


def test_compile_cpu_time_beyond_threshold_and_noise_is_a_regression():
    slower = [c * 1.6 for c in STEADY]
    _, rows = judge(compile_cost(cold_cpu_s=STEADY), compile_cost(cold_cpu_s=slower))
    row = rows["compile_cpu_s"]
    assert row.verdict == "regression" and row.change == pytest.approx(60.0)
    assert "4 → 4 cold compiles" in row_message(row) and row.noise_pct < 10


def test_compile_cpu_time_inside_its_noise_is_inconclusive():
    scattered = [14.0, 30.0, 18.0, 26.0]
    _, rows = judge(
        compile_cost(cold_cpu_s=scattered), compile_cost(cold_cpu_s=[c * 1.7 for c in scattered])
    )
    assert rows["compile_cpu_s"].verdict == "inconclusive"


def test_one_cold_compile_a_side_cannot_fail_on_cpu_time():
    """No noise estimate, and CPU time moves with load: beyond the threshold is inconclusive."""
    report, rows = judge(compile_cost(cpu_s=20.0), compile_cost(cpu_s=40.0))
    row = rows["compile_cpu_s"]
    assert row.verdict == "inconclusive" and "no noise estimate" in row_message(row)
    assert report.exit_code == EXIT_OK


def test_the_runs_own_cpu_noise_is_used_when_there_is_one_cold_compile():
    _, rows = judge(
        compile_cost(cpu_s=20.0, cpu_noise_pct=5.0), compile_cost(cpu_s=40.0, cpu_noise_pct=5.0)
    )
    assert rows["compile_cpu_s"].verdict == "regression"


def test_an_old_baseline_without_compile_cost_says_so_and_does_not_fail():
    """The baseline predates the measurement: `new` (exit 0) with the way to gate it."""
    report, rows = judge(None, compile_cost(cold_cpu_s=STEADY))
    for metric in ("compile_work", "compile_cpu_s"):
        assert rows[metric].verdict == "new", rows[metric]
        assert "the baseline predates" in row_message(rows[metric])
        assert "refresh the baseline" in row_message(rows[metric])
    assert rows["compile_s"].verdict == "pass" and not rows["compile_s"].gated
    assert report.exit_code == EXIT_OK


def test_a_run_without_compile_cost_is_refused_at_the_door():
    """Only an older baseline may lack compile cost; a run that lacks it is not a result
    (results/model.parse: exit 2), so the gate never sees one."""
    with pytest.raises(BaselineError, match=r"variants\[0\]: 'compile_cost' is a required"):
        judge(compile_cost(), None)


def test_gated_wall_time_uses_the_noise_of_both_runs_cold_compiles():
    gated = {"gate_compile_wall_time": True}
    base = compile_cost(cold_cpu_s=STEADY)
    for sample, wall in zip(base["cold_samples"], (10.0, 30.0, 14.0, 26.0)):
        sample["wall_s"] = wall
    cur = compile_cost(cold_cpu_s=STEADY)
    for sample, wall in zip(cur["cold_samples"], (14.0, 42.0, 19.6, 36.4)):
        sample["wall_s"] = wall
    base_step = step(variants=[variant(compile_s=10.0, compile_cost=base)], settings=gated)
    cur_step = step(variants=[variant(compile_s=14.0, compile_cost=cur)])
    report = judge_documents(result(base_step), result(cur_step))
    (row,) = report.rows(metric="compile_s")
    assert row.verdict == "inconclusive" and row.noise_pct > 40


def test_a_run_that_compiled_from_a_warm_shared_cache_is_not_judged_on_cpu_time():
    warm = compile_cost(cpu_s=2.0)
    warm["cold_samples"] = []  # --inductor-cache: every process hit the shared cache
    report, rows = judge(compile_cost(cpu_s=20.0), warm)
    row = rows["compile_cpu_s"]
    assert (row.verdict, row.gated) == ("pass", False)
    assert "this run compiled from a shared, warm Inductor cache" in row_message(row)
    assert rows["compile_work"].verdict == "pass" and report.exit_code == EXIT_OK


def test_cpu_time_values_are_the_ones_the_change_is_computed_from():
    """On torch < 2.5 every process compiles cold: the first one's CPU time (33.7 s) shown
    beside a change computed over all of them (-23 %) read as a contradiction."""
    base = compile_cost(cpu_s=24.7, cold_cpu_s=[24.7])
    cur = compile_cost(cpu_s=33.7, cold_cpu_s=[33.7, 12.0, 12.0, 12.0])
    _, rows = judge(base, cur)
    row = rows["compile_cpu_s"]
    expected = (row.current / row.baseline - 1) * 100
    assert row.change == pytest.approx(expected) and row.change < 0
    assert f"{row.baseline:.1f} s → {row.current:.1f} s ({row.change:+.1f} %" in row_message(row)


# -- compile work per eager op (issue 31) -------------------------------------------------------


def sized(eager_ops: int | None, **counts: int | None) -> dict:
    cost = compile_cost(cold_cpu_s=STEADY, **counts)
    if eager_ops is not None:
        cost["eager_ops"] = eager_ops
    return cost


def test_a_bigger_model_is_not_more_compile_work_per_op():
    """One more layer: FX nodes, guards and kernels up ~50 %, the region's ATen ops too."""
    base = sized(400, fx_nodes=120, guards=300, generated_kernels=60)
    cur = sized(600, fx_nodes=178, guards=445, generated_kernels=90)
    report, rows = judge(base, cur)
    row = rows["compile_work"]
    assert row.verdict == "pass" and report.exit_code == EXIT_OK
    assert "FX nodes 120 → 178 (0.3 → 0.297 per op)" in row_message(row)
    assert "400 → 600 ATen ops eager" in row_message(row)


def test_the_same_bigger_model_without_its_size_fails_on_the_raw_counts():
    """Documents from before eager_ops (either side) are judged as before."""
    for base_ops, cur_ops in ((None, 600), (400, None), (None, None)):
        base = sized(base_ops, fx_nodes=120, guards=300, generated_kernels=60)
        cur = sized(cur_ops, fx_nodes=178, guards=445, generated_kernels=90)
        _, rows = judge(base, cur)
        assert rows["compile_work"].verdict == "regression"
        assert "ATen ops" not in row_message(rows["compile_work"])


def test_the_same_model_compiling_into_more_guards_per_op_fails():
    _, rows = judge(sized(400, guards=300), sized(400, guards=330))
    assert rows["compile_work"].verdict == "regression"
    assert "guards 300 → 330 (0.75 → 0.825 per op)" in row_message(rows["compile_work"])


def test_graphs_and_compile_records_stay_counts_when_the_model_grows():
    """A graph break in a bigger model: the graph count is not divided by the size."""
    _, rows = judge(sized(400, graphs=1), sized(800, graphs=2))
    assert rows["compile_work"].verdict == "regression"
    assert "graphs 1 → 2" in row_message(rows["compile_work"])


def test_a_per_op_growth_needs_the_raw_count_up():
    """The region grew less than its FX nodes did not: a smaller model with the same count."""
    _, rows = judge(sized(400, fx_nodes=120), sized(300, fx_nodes=120))
    assert rows["compile_work"].verdict == "pass"


def test_a_smaller_model_is_not_an_improvement_per_op():
    _, rows = judge(
        sized(600, fx_nodes=178, guards=445, generated_kernels=90),
        sized(400, fx_nodes=120, guards=300, generated_kernels=60),
    )
    assert rows["compile_work"].verdict == "pass"
