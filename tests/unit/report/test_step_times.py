"""Step times and speedup across runs: fastest iterations per process, both runs' processes
pooled, in yardstick units unless the torch versions differ (gate/step_times.py)."""

from __future__ import annotations

import pytest
from gate_docs import environment, judge_documents, result, step, variant, with_history

from compilegate.report.row_words import row_message
from compilegate.results.stats import compare_processes, t_quantile
from compilegate.schemas import validation_errors

SCATTER = (0.99, 1.01, 1.0, 0.995, 1.005)


def record(eager_ms: float, yardstick_ms: float, compiled_ms: float | None = None) -> dict:
    fastest = {"eager": eager_ms, "eager_b": eager_ms, "yardstick": yardstick_ms}
    if compiled_ms is not None:
        fastest["compiled"] = compiled_ms
    return {
        "step_ms": eager_ms * 1.1,
        "fastest_ms": fastest,
        "samples_ms": {side: [ms, ms * 1.2] for side, ms in fastest.items()},
    }


def measured_step(
    eager_ms: float = 10.0,
    compiled_ms: float = 8.0,
    *,
    machine: float = 1.0,
    scatter: tuple[float, ...] = SCATTER,
    processes: int = 4,
) -> dict:
    """A step whose eager reference and four variant processes left records; `machine`
    scales every time, the yardstick's too (a slower runner), `scatter` each process's."""
    doc = step(eager_ms=eager_ms * machine, variants=[variant(step_ms=compiled_ms * machine)])
    doc["eager"]["processes"] = [record(eager_ms * machine * scatter[0], 2.0 * machine)]
    doc["variants"][0]["processes"] = [
        record(eager_ms * machine * s, 2.0 * machine, compiled_ms * machine * s)
        for s in scatter[1 : processes + 1]
    ]
    return doc


def rows(baseline: dict, current: dict, **env: str) -> dict:
    base_doc = result(baseline)
    cur_doc = result(current, env=environment(**env) if env else None)
    report = judge_documents(base_doc, cur_doc)
    return {r.metric: r for r in report.verdicts}


def test_documents_with_process_records_are_valid_results() -> None:
    assert validation_errors(result(measured_step()), "result") == []


def test_unchanged_code_passes_with_the_noise_of_both_runs_processes() -> None:
    judged = rows(measured_step(), measured_step())
    for metric in ("eager_step_ms", "compiled_step_ms", "speedup"):
        assert judged[metric].verdict == "pass"
        assert judged[metric].noise_pct is not None and judged[metric].noise_pct < 5
    eager = judged["eager_step_ms"]
    assert eager.normalisation == "yardstick" and judged["speedup"].normalisation is None
    assert "fastest iterations, 5 processes → 5" in row_message(eager)
    assert "fastest iterations, 4 processes → 4" in row_message(judged["compiled_step_ms"])


def test_the_noise_is_a_pooled_two_sample_t_interval() -> None:
    """4 compiled values a run, pooled: df 6, t 2.447, sd of the logs, √(1/4 + 1/4)."""
    base = [8.0 * s for s in SCATTER[1:]]
    cur = [8.8 * s for s in SCATTER[1:]]
    comparison = compare_processes(base, cur)
    assert comparison.df == 6 and comparison.processes == (4, 4)
    assert comparison.change_pct == pytest.approx(10.0)
    judged = rows(measured_step(), measured_step(compiled_ms=8.8))["compiled_step_ms"]
    assert judged.noise_pct == pytest.approx(comparison.noise_pct)
    assert t_quantile(0.975, 6) == pytest.approx(2.4469, abs=1e-4)


def test_a_ten_percent_compiled_slowdown_is_a_regression_of_both_compiled_metrics() -> None:
    judged = rows(with_history(measured_step()), measured_step(compiled_ms=8.8))
    assert judged["compiled_step_ms"].verdict == "regression"
    assert judged["compiled_step_ms"].change == pytest.approx(10.0, abs=0.5)
    assert judged["speedup"].verdict == "regression"
    assert judged["eager_step_ms"].verdict == "pass"


def test_a_ten_percent_eager_slowdown_is_an_eager_regression() -> None:
    judged = rows(with_history(measured_step()), measured_step(eager_ms=11.0))
    assert judged["eager_step_ms"].verdict == "regression"
    assert judged["compiled_step_ms"].verdict == "pass"
    assert judged["speedup"].verdict == "improvement"


def test_a_one_run_baseline_reports_step_times_and_judges_the_speedup() -> None:
    """Issue 28: one stored run says nothing of how far whole runs of a machine land apart
    (an idle H200 reran the same commit +16 % off its ±8 % process noise), so against it an
    absolute step time is reported, never failed; the speedup, a ratio inside each process,
    still gates."""
    judged = rows(measured_step(), measured_step(compiled_ms=8.8))
    for metric in ("compiled_step_ms", "compiled_step_ms_p25"):
        row = judged[metric]
        assert (row.verdict, row.gated) == ("pass", False), row_message(row)
        assert row.change == pytest.approx(10.0, abs=0.5)
        assert "reported, not judged: 1 of 5 default-branch runs recorded" in row_message(row)
    assert judged["speedup"].verdict == "regression" and judged["speedup"].gated
    eager = rows(measured_step(), measured_step(eager_ms=11.0))["eager_step_ms"]
    assert (eager.verdict, eager.gated) == ("pass", False)


def test_processes_that_disagree_make_a_slowdown_inconclusive() -> None:
    """Against a history, the history's spread is the noise; a history as spread as the
    processes here (±15 %) cannot decide a 10 % slowdown."""
    wide = (0.85, 1.15, 0.9, 1.1, 1.0)
    base = with_history(measured_step(scatter=wide), scatter=wide)
    judged = rows(base, measured_step(compiled_ms=8.8, scatter=wide))
    row = judged["compiled_step_ms"]
    assert row.verdict == "inconclusive" and row.noise_pct > 10
    assert row.noise_source == "history" and "default branch" in row_message(row)


def test_a_slower_machine_is_not_a_slower_step() -> None:
    """Every time +30 %, the yardstick's too: the same step in yardstick units."""
    judged = rows(measured_step(), measured_step(machine=1.3))
    for metric in ("eager_step_ms", "compiled_step_ms", "speedup"):
        assert judged[metric].verdict == "pass", row_message(judged[metric])
    assert "raw 8.02 ms → 10.43 ms, +30.0 %" in row_message(judged["compiled_step_ms"])
    assert judged["compiled_step_ms"].unit == "yardsticks"  # values, change: one unit


def test_across_torch_versions_step_times_are_compared_raw_and_the_row_says_why() -> None:
    """The yardstick runs on the torch under test: across versions it is no fixed unit."""
    base = with_history(measured_step())
    judged = rows(base, measured_step(machine=1.3), torch="2.11.0+cu128")
    for metric in ("eager_step_ms", "compiled_step_ms"):
        row = judged[metric]
        assert row.normalisation == "raw" and row.verdict == "regression"
        assert "raw milliseconds (torch 2.10.0+cu128 → 2.11.0+cu128" in row_message(row)
    assert judged["speedup"].verdict == "pass"  # a ratio inside each process


def test_a_run_without_process_records_is_judged_on_medians() -> None:
    """A result written before process records: medians and the runs' own noise."""
    old = step()
    judged = rows(old, measured_step())
    assert judged["eager_step_ms"].verdict == "pass"
    assert "fastest iterations" not in row_message(judged["eager_step_ms"])


def test_one_process_on_each_side_has_no_degrees_of_freedom() -> None:
    one = measured_step(processes=1)
    one["eager"]["processes"] = []
    judged = rows(one, one)
    assert "fastest iterations" not in row_message(judged["compiled_step_ms"])


def test_median_path_across_torch_versions_is_raw_too() -> None:
    base = step(eager_ms=10.0)
    cur = step(eager_ms=10.2)
    for doc, ratio in ((base, 5.0), (cur, 5.0)):
        doc["eager"]["per_yardstick"] = {"median": ratio, "ci_low": ratio, "ci_high": ratio}
    row = rows(base, cur, torch="2.11.0+cu128")["eager_step_ms"]
    assert row.normalisation == "raw" and "against the machine yardstick" not in row_message(row)
    assert "torch 2.10.0+cu128 → 2.11.0+cu128" in row_message(row)
    same = rows(base, cur)["eager_step_ms"]
    assert same.normalisation == "yardstick" and "against the machine yardstick" in row_message(
        same
    )


def test_an_unsteady_run_fails_no_step_time_row_and_a_paired_one_is_judged() -> None:
    """Issue 28: the health line says an unsteady run's numbers support no verdict, and the
    gate agrees — its step times are reported, not judged, even against a history."""
    base = result(with_history(measured_step()))
    head = result(measured_step(eager_ms=11.0, compiled_ms=8.8))
    steady = {r.metric: r for r in judge_documents(base, head).verdicts}
    assert steady["eager_step_ms"].verdict == "regression"
    head["run_health"] = {"unsteady": ["other processes took 61 % of its CPU"]}
    unsteady = {r.metric: r for r in judge_documents(base, head).verdicts}
    for metric in ("eager_step_ms", "compiled_step_ms", "eager_step_ms_p25"):
        assert (unsteady[metric].verdict, unsteady[metric].gated) == ("pass", False)
        assert "unsteady (run health)" in row_message(unsteady[metric])


def most_iterations_slower(factor: float, *, iterations: int = 30, processes: int = 4) -> dict:
    """A step whose processes each time `iterations` samples; with `factor` > 1 every
    iteration but the fastest is that much slower (each process's fastest unchanged)."""
    from gate_docs import process, with_processes

    def samples(base_ms: float, s: float) -> list[float]:
        values = [base_ms * s * (1 + 0.002 * i) for i in range(iterations)]
        return [values[0]] + [v * factor for v in values[1:]]

    doc = step(eager_ms=10.0, variants=[variant(step_ms=8.0)])
    eager = [process(samples(10.0, SCATTER[0]), yardstick=[2.0] * iterations)]
    compiled = [
        process(samples(10.0, s), samples(8.0, s), yardstick=[2.0] * iterations)
        for s in SCATTER[1 : processes + 1]
    ]
    return with_processes(doc, eager, [compiled])


def test_a_gross_slowdown_fails_against_one_stored_run() -> None:
    """Issue 39: 29 of 30 iterations 1.5x slower, each process's fastest unchanged, against
    a one-run baseline: the 25th percentiles moved +50 %, beyond the 40 % any drift between
    whole runs reached, so the job fails without a history; a 10 % change stays reported."""
    judged = rows(most_iterations_slower(1.0), most_iterations_slower(1.5))
    for metric in ("eager_step_ms_p25", "compiled_step_ms_p25"):
        row = judged[metric]
        assert (row.verdict, row.gated) == ("regression", True), row_message(row)
        assert row.change == pytest.approx(50.0, abs=1.0) and row.threshold == 40.0
        assert "step_time_gross_growth_pct" in row_message(row)
    for metric in ("eager_step_ms", "compiled_step_ms"):  # the fastest iterations: unchanged
        assert judged[metric].verdict == "pass"
    mild = rows(most_iterations_slower(1.0), most_iterations_slower(1.1))
    row = mild["compiled_step_ms_p25"]
    assert (row.verdict, row.gated) == ("pass", False), row_message(row)
    assert "reported, not judged: 1 of 5 default-branch runs recorded" in row_message(row)


def test_the_gross_bound_is_the_baselines_policy() -> None:
    base = most_iterations_slower(1.0)
    base["settings"]["thresholds"]["step_time_gross_growth_pct"] = 60.0
    row = rows(base, most_iterations_slower(1.5))["compiled_step_ms_p25"]
    assert (row.verdict, row.gated) == ("pass", False), row_message(row)


def test_a_baseline_recorded_from_an_unsteady_run_gates_no_step_time_but_its_history_does():
    """Issue 40: `baseline update` records a busy runner's run with its times marked
    (`unsteady_times`). Against that one run no step time gates — not even a slowdown
    beyond the gross bound, which assumes a steady run — and the row says what would judge
    it; a history of steady runs judges them as before; the speedup still gates."""
    base = most_iterations_slower(1.0)
    base["unsteady_times"] = ["other processes took 83 % of its CPU"]
    judged = rows(base, most_iterations_slower(1.5))
    for metric in ("eager_step_ms_p25", "compiled_step_ms_p25", "eager_step_ms"):
        row = judged[metric]
        assert (row.verdict, row.gated) == ("pass", False), row_message(row)
        assert "the baseline's step times were measured on an unsteady machine" in row_message(row)
        assert "once a steady run of baseline update replaces them" in row_message(row)
    assert judged["speedup"].gated is not False
    marked = with_history(measured_step())
    marked["unsteady_times"] = ["load average 3.2 on 2 cores"]
    row = rows(marked, measured_step(eager_ms=11.0, compiled_ms=8.8))["eager_step_ms"]
    assert (row.verdict, row.gated) == ("regression", True), row_message(row)
    assert "default branch's last 5 runs" in row_message(row)


def test_counts_graph_breaks_and_numerics_gate_against_an_unsteady_baseline() -> None:
    """Issue 40: what load cannot move gates from a baseline recorded on a busy runner."""
    base = measured_step()
    base["unsteady_times"] = ["other processes took 83 % of its CPU"]
    head = measured_step()
    head["variants"][0]["graph_breaks"] = {
        "count": 1,
        "sites": [{"file": "model.py", "line": 12, "reason": "graph_break()", "count": 1}],
    }
    head["variants"][0]["numerics"] = {"status": "fail", "failed": ["loss"]}
    judged = rows(base, head)
    assert judged["graph_break_sites"].verdict == "regression"
    assert judged["numerics"].verdict == "regression"


def test_the_first_screen_says_unjudged_step_times_that_grew_and_not_those_that_fell(
    tmp_path,
) -> None:
    """On an unsteady machine step times are not judged; the first screen names those that
    grew beyond their limit (a possible slowdown nobody judged), not those that fell."""
    from report_runs import judge

    from compilegate.report.first_screen import FirstScreen

    def screen(eager_ms: float) -> str:
        head = result(measured_step(eager_ms=eager_ms, compiled_ms=8.0))
        head["run_health"] = {"unsteady": ["other processes took 61 % of its CPU"]}
        run_set = judge(tmp_path, result(with_history(measured_step())), **{"torch-x": head})
        return " ".join(FirstScreen.of(run_set).text().split())

    assert "were not judged (" in screen(11.5)
    assert "not judged (" not in screen(8.5)
