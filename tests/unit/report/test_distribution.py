"""Beyond the fastest iteration: each process's 25th percentile, pooled across processes
(gate/judges/distribution.py)."""

from __future__ import annotations

import pytest
from gate_docs import judge_documents, process, result, step, variant, with_history, with_processes

from compilegate.errors import EXIT_OK, EXIT_REGRESSION
from compilegate.report.row_words import row_message

SCATTER = (1.0, 0.99, 1.01, 0.995, 1.005)
ITERATIONS = 30


def samples(fastest_ms: float, slow_share: float = 0.0, slow_factor: float = 1.5) -> list[float]:
    """30 iterations a little above the fastest, the last `slow_share` of them slower."""
    values = [fastest_ms * (1 + 0.002 * i) for i in range(ITERATIONS)]
    slow = round(slow_share * ITERATIONS)
    return values[:1] + [v * slow_factor for v in values[1 : slow + 1]] + values[slow + 1 :]


def timed(*, eager_slow: float = 0.0, compiled_slow: float = 0.0, disturbed: int = 0) -> dict:
    """A step with an eager reference and four variant processes. `*_slow`: the share of
    iterations 1.5x slower (the fastest untouched); `disturbed`: that many iterations per
    process preempted for 3x as long, eager, compiled and yardstick alike (load)."""

    def side(ms: float, slow: float, scale: float) -> list[float]:
        values = [v * scale for v in samples(ms, slow)]
        for i in range(disturbed):
            values[(7 * i + 3) % ITERATIONS] *= 3
        return values

    doc = step(variants=[variant()])
    records = [
        process(side(10.0, eager_slow, s), side(8.0, compiled_slow, s), side(2.0, 0.0, s))
        for s in SCATTER
    ]
    return with_processes(doc, records[:1], [records[1:]])


def judged(base: dict, cur: dict):
    report = judge_documents(result(base), result(cur))
    return report, {(r.variant, r.metric): r for r in report.verdicts}


def test_29_of_30_iterations_slower_with_the_fastest_unchanged_is_a_regression() -> None:
    """Issue 14 item 4: the fastest-iteration rows pass this; the 25th percentile does not."""
    report, rows = judged(with_history(timed()), timed(eager_slow=29 / 30, compiled_slow=29 / 30))
    assert report.exit_code == EXIT_REGRESSION
    assert rows[("eager", "eager_step_ms")].verdict == "pass"
    assert rows[("default", "compiled_step_ms")].verdict == "pass"
    for key, processes in (
        (("eager", "eager_step_ms_p25"), 5),
        (("default", "compiled_step_ms_p25"), 4),
    ):
        row = rows[key]
        assert row.verdict == "regression", row_message(row)
        assert row.change == pytest.approx(50.0, abs=1.5)
        assert f"each process's 25th percentile, {processes} processes → {processes}" in (
            row_message(row)
        )


def test_a_compiled_only_slowdown_of_most_iterations_is_a_compiled_regression() -> None:
    _, rows = judged(with_history(timed()), timed(compiled_slow=0.9))
    assert rows[("default", "compiled_step_ms_p25")].verdict == "regression"
    assert rows[("eager", "eager_step_ms_p25")].verdict == "pass"


def test_a_few_slow_iterations_are_not_a_regression() -> None:
    """A regression on a fifth of the iterations moves neither the fastest nor the p25."""
    report, rows = judged(timed(), timed(eager_slow=0.2, compiled_slow=0.2))
    assert rows[("eager", "eager_step_ms_p25")].verdict == "pass"
    assert report.exit_code == EXIT_OK


def test_load_that_preempts_some_iterations_is_not_a_regression() -> None:
    """A busy neighbour lengthens some iterations of every side, the yardstick's too."""
    report, rows = judged(timed(), timed(disturbed=6))
    assert rows[("eager", "eager_step_ms_p25")].verdict == "pass"
    assert rows[("default", "compiled_step_ms_p25")].verdict == "pass"
    assert report.exit_code == EXIT_OK


def test_the_quantile_threshold_comes_from_the_baseline() -> None:
    base = timed()
    base["settings"]["thresholds"]["step_time_quantile_growth_pct"] = 60.0
    cur = timed(eager_slow=29 / 30)
    cur["settings"]["thresholds"]["step_time_quantile_growth_pct"] = 5.0
    _, rows = judged(base, cur)
    row = rows[("eager", "eager_step_ms_p25")]
    assert (row.verdict, row.threshold) == ("pass", 60.0)


def test_results_without_raw_samples_have_no_quantile_rows() -> None:
    base, cur = timed(), timed()
    for doc in (base, cur):
        for record in doc["eager"]["processes"] + doc["variants"][0]["processes"]:
            del record["samples_ms"]
    _, rows = judged(base, cur)
    assert not [key for key in rows if key[1].endswith("_p25")]
    assert rows[("eager", "eager_step_ms")].verdict == "pass"
