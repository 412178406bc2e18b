"""The default branch's recent runs in the baseline, and the gate's prediction interval from
them (gate/history.py): kept by `baseline update`, and checked by simulation — a run lands
off another by the day's load, which one run's processes cannot see."""

from __future__ import annotations

import copy
import random
from pathlib import Path

from gate_docs import (
    judge_documents,
    merge_documents,
    process,
    result,
    step,
    variant,
    with_processes,
)

from compilegate.gate.baseline import merge_into_baseline
from compilegate.gate.compare import compare_to_baseline
from compilegate.gate.history import HISTORY_RUNS, predict
from compilegate.report.judge_and_render import one_version_run_set, render_report
from compilegate.report.row_words import row_message
from compilegate.results.model import ResultDocument, parse

PROCESSES = 4
ITERATIONS = 20


def simulated_run(rng: random.Random, day_sd: float, eager_ms=10.0, compiled_ms=8.0) -> dict:
    """A run of one step on a shared runner: the day's load shifts the whole run (log sd
    `day_sd`), each process has its own luck (±1.5 %), iterations scatter (±3 %). The
    yardstick beside it is steady, as a constant neighbour leaves it (what moves the run
    here is what the yardstick does not cancel)."""
    day = rng.gauss(0, day_sd)

    def samples(true_ms: float, luck: float) -> list[float]:
        return [true_ms * (1 + day + luck + rng.gauss(0, 0.03)) for _ in range(ITERATIONS)]

    eager, variants = [], []
    for _ in range(PROCESSES):
        luck = rng.gauss(0, 0.015)
        eager.append(process(samples(eager_ms, luck)))
        luck = rng.gauss(0, 0.015)
        variants.append(process(samples(eager_ms, luck), samples(compiled_ms, luck)))
    doc = step(variants=[variant(step_ms=compiled_ms)])
    doc["settings"]["eager_processes"] = doc["settings"]["variant_processes"] = PROCESSES
    return result(with_processes(doc, eager, [variants]))


def baseline_of(runs: list[dict]) -> dict:
    baseline = None
    for run in runs:
        baseline, _ = merge_documents(baseline, run)
    return baseline


def read(document: dict) -> ResultDocument:
    """A simulated run through the door (results/model.parse), once."""
    return parse(document, "result.json")


def history_of(runs: list[ResultDocument]) -> ResultDocument:
    """baseline_of for the simulations, kept typed between merges: re-reading each merged
    baseline through the door (a schema walk of up to ten runs' history) was 80 % of their
    time, and what `baseline update` writes and reads back is checked by the tests that use
    baseline_of."""
    baseline = None
    for run in runs:
        baseline, _ = merge_into_baseline(baseline, run, Path("baseline.json"))
    assert baseline is not None
    return baseline


def regressed(baseline: ResultDocument, run: ResultDocument) -> set[str]:
    report = compare_to_baseline(baseline, run)
    return {r.metric for r in report.verdicts if r.verdict == "regression"}


def test_baseline_update_keeps_the_last_runs_newest_last_and_restarts_on_a_new_config():
    rng = random.Random(1)
    runs = [simulated_run(rng, 0.0) for _ in range(HISTORY_RUNS + 3)]
    for number, run in enumerate(runs):
        run["created_at"] = f"2026-11-{number + 1:02d}T00:00:00+00:00"
    baseline = baseline_of(runs)
    history = baseline["steps"][0]["history"]
    assert len(history) == HISTORY_RUNS
    assert history[-1]["created_at"] == runs[-1]["created_at"]
    assert set(history[-1]["variants"]) == {"default"}
    assert 9 < history[-1]["eager_step_ms"] < 11 and history[-1]["eager_step_yardsticks"]
    # a result that brings its own history does not get to write the baseline's
    forged = copy.deepcopy(runs[0])
    forged["steps"][0]["history"] = [{"eager_step_ms": 1e9}] * 50
    after, _ = merge_documents(baseline, forged)
    assert len(after["steps"][0]["history"]) == HISTORY_RUNS
    assert max(r["eager_step_ms"] for r in after["steps"][0]["history"]) < 11
    # another configuration measures something else: its history starts again
    changed = copy.deepcopy(runs[0])
    changed["steps"][0]["config_fingerprint"] = "fp-2"
    restarted, _ = merge_documents(baseline, changed)
    assert len(restarted["steps"][0]["history"]) == 1


def test_prediction_interval_needs_five_runs_and_widens_with_their_spread():
    assert predict([1.0, 1.1, 1.05, 0.95]) is None
    steady = predict([1.0, 1.01, 0.99, 1.0, 1.005])
    unsteady = predict([1.0, 1.1, 0.9, 1.05, 0.95])
    assert steady is not None and unsteady is not None
    assert steady.noise_pct < 3 < unsteady.noise_pct


def test_another_days_load_is_no_regression_with_a_history_or_without_one():
    """A/A under a day-to-day shift of ±2.5 % a run. Against the one latest baseline run,
    its processes' interval called the shift a step-time regression in one comparison in
    ten or more: the step times are now reported, not judged, there (issue 28), and the
    speedup — a ratio inside each process, which the day's shift does not move — gates
    alone. Against the default branch's last 10 runs, ≤ 2.5 % false regressions. A real
    10 % slowdown of the compiled step is still caught ≥ 80 %, with or without a history."""
    rng = random.Random(22)
    trials = 120
    without, with_history, caught, caught_without, shifted = 0, 0, 0, 0, 0
    for _ in range(trials):
        runs = [read(simulated_run(rng, 0.025)) for _ in range(HISTORY_RUNS)]
        head = read(simulated_run(rng, 0.025))
        one_run = history_of(runs[-1:])
        without += bool(regressed(one_run, head))
        shifted += any(
            abs(r.change or 0) > (r.threshold or 0) and not r.gated
            for r in compare_to_baseline(one_run, head).verdicts
            if r.metric.endswith("step_ms")
        )
        baseline = history_of(runs)
        with_history += bool(regressed(baseline, head))
        slower = read(simulated_run(rng, 0.025, compiled_ms=8.0 * 1.10))
        caught += bool(regressed(baseline, slower) & {"speedup", "compiled_step_ms"})
        caught_without += bool(regressed(one_run, slower) & {"speedup"})
    assert shifted / trials >= 0.10, shifted  # what one stored run would have failed on
    assert without / trials <= 0.025, without
    assert with_history / trials <= 0.025, with_history
    assert caught / trials >= 0.80, caught
    assert caught_without / trials >= 0.80, caught_without


def neighbour_run(rng: random.Random, eager_ms: float = 10.0, eager_plant: float = 0) -> dict:
    """A run on a runner whose neighbour's job comes and goes (bench/gate_power.py
    --load-period): each process overlaps it or not, by chance. The neighbour slows every
    iteration of an overlapped process by 20-50 %, and its yardstick, timed beside it, by
    about as much (0.6-1.5 times the step's slowdown: on the 2-core runner a process that
    ran under two busy loops measured its eager step 25-50 % and its yardstick 35-45 % slow,
    bench/gate_power.py --work /tmp/gp23). `eager_plant`: ms added to every eager iteration."""

    def process_of(with_compiled: bool) -> dict:
        slow = rng.uniform(0.2, 0.5) if rng.random() < 0.5 else 0.0
        luck = rng.gauss(0, 0.015)

        def samples(true_ms: float) -> list[float]:
            return [true_ms * (1 + slow) * (1 + luck + abs(rng.gauss(0, 0.03))) for _ in range(20)]

        yardstick = [2.0 * (1 + slow * rng.uniform(0.6, 1.5)) * (1 + abs(rng.gauss(0, 0.01)))]
        eager = [s + eager_plant for s in samples(eager_ms)]
        compiled = samples(eager_ms * 0.8) if with_compiled else None
        return process(eager, compiled, yardstick * len(eager))

    # the defaults: one eager reference, four processes of the variant (eager timed in each)
    eager = [process_of(False)]
    variants = [process_of(True) for _ in range(PROCESSES)]
    doc = step(variants=[variant(step_ms=eager_ms * 0.8)])
    doc["settings"]["eager_processes"], doc["settings"]["variant_processes"] = 1, PROCESSES
    return result(with_processes(doc, eager, [variants]))


def verdicts(baseline: ResultDocument, run: ResultDocument, metric: str) -> str:
    report = compare_to_baseline(baseline, run)
    return next(r.verdict for r in report.verdicts if r.metric == metric)


def test_a_neighbour_that_comes_and_goes_leaves_the_history_able_to_decide():
    """Against five default-branch runs with a neighbour that overlaps about half the
    processes of every run: an unchanged commit is seldom flagged (regression ≤ 2 %,
    inconclusive ≤ 10 %) and a 10 % eager slowdown is caught in ≥ 60 %. The row's noise is
    the history's prediction alone. Taking the wider of it and this run's own two-sample
    interval (the neighbour scatters this run's processes) caught 77 of these 150 (51 %);
    the prediction alone, 105 (70 %). Measured on the real runner the gap was wider:
    bench/gate_power.py --judge-only /tmp/gp23, 0/5 against 5/5."""
    rng = random.Random(23)
    trials = 150
    regressions, inconclusive, caught = 0, 0, 0
    for _ in range(trials):
        baseline = history_of([read(neighbour_run(rng)) for _ in range(5)])
        head = read(neighbour_run(rng))
        rows = {verdicts(baseline, head, m) for m in ("eager_step_ms", "compiled_step_ms")}
        regressions += "regression" in rows
        inconclusive += "inconclusive" in rows
        slower = read(neighbour_run(rng, eager_plant=1.0))
        caught += verdicts(baseline, slower, "eager_step_ms") == "regression"
    # measured with this seed: 1, 4 and 105 of 150
    assert regressions / trials <= 0.02, regressions
    assert inconclusive / trials <= 0.10, inconclusive
    assert caught / trials >= 0.60, caught


def test_an_inconclusive_row_against_a_history_says_a_rerun_will_not_narrow_its_noise():
    """Against a history the noise is the default branch's spread from run to run: rerunning
    this run leaves it as it is, so the row and the report say what would narrow it
    (against one baseline run a rerun with more processes does: test_render_verdict.py)."""
    rng = random.Random(5)
    unsteady = [simulated_run(rng, 0.08) for _ in range(5)]
    slower = simulated_run(rng, 0.0, eager_ms=10.0 * 1.12)

    baseline = baseline_of(unsteady)
    report = judge_documents(baseline, slower)
    rows = [r for r in report.verdicts if r.metric == "eager_step_ms"]
    run_set = one_version_run_set(
        report,
        parse(slower, "r.json"),
        parse(baseline, "b.json", "baseline"),
        ("r.json", "b.json"),
    )
    text = " ".join(render_report(report, "table", run_set).split())
    assert [r.verdict for r in rows] == ["inconclusive"], [row_message(r) for r in rows]
    assert rows[0].noise_source == "history"
    assert "which a rerun of this run leaves as it is" in row_message(rows[0])
    assert "(the baseline keeps 10, it has 5)" in row_message(rows[0])
    assert "default branch's own run-to-run spread" in text and "a rerun does not" in text
    assert "rerun with more processes" not in text


def test_a_run_whose_times_are_not_vouched_for_does_not_join_the_history():
    """Issue 40: a run recorded from an unsteady machine (gate/baseline.py marks its steps'
    `unsteady_times`) would carry its outlier into every later prediction; a steady run
    after it joins the history without it, and a marked baseline from before histories is
    not taken as their first run."""
    rng = random.Random(3)
    steady = [simulated_run(rng, 0.0) for _ in range(3)]
    busy = simulated_run(rng, 0.0, eager_ms=30.0, compiled_ms=24.0)
    busy["steps"][0]["unsteady_times"] = ["other processes took 83 % of its CPU"]
    baseline = baseline_of([*steady, busy])
    history = baseline["steps"][0]["history"]
    assert len(history) == 3 and max(r["eager_step_ms"] for r in history) < 11
    after, _ = merge_documents(baseline, simulated_run(rng, 0.0))
    assert len(after["steps"][0]["history"]) == 4
    assert max(r["eager_step_ms"] for r in after["steps"][0]["history"]) < 11
    first, _ = merge_documents(None, busy)
    assert first["steps"][0]["history"] == []
    del first["steps"][0]["history"]  # a baseline written before histories, marked
    after_first, _ = merge_documents(first, steady[0])
    assert len(after_first["steps"][0]["history"]) == 1
    # a marked run of another configuration still restarts the history
    changed = copy.deepcopy(busy)
    changed["steps"][0]["config_fingerprint"] = "fp-2"
    restarted, _ = merge_documents(baseline, changed)
    assert restarted["steps"][0]["history"] == []
