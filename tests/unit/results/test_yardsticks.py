"""Which yardstick a step time is divided by (results/yardsticks.py), by simulation: a
launch-bound step follows the host's dispatch speed, a GPU-bound one the GPU's (issue 28:
on an H200 the seed's launch-bound step wandered 11.4–17.8 ms with the SM clock fixed,
and the matmul yardstick did not follow it)."""

from __future__ import annotations

import random

import pytest
from gate_docs import judge_documents, result, step, variant, with_processes

from compilegate.report.row_words import row_message
from compilegate.report.row_words.speed import yardstick_words
from compilegate.results.model import Process, parse
from compilegate.results.processes import GPU_BOUND, LAUNCH_BOUND, eager_values
from compilegate.results.yardsticks import Choice, pooled_log_spread, tracking_yardstick


def machine(seed: int, processes: int, host_drift: float, gpu_drift: float) -> list[tuple]:
    """(host slowness, GPU slowness) of each process: uniform within ±drift."""
    rng = random.Random(seed)
    return [
        (rng.uniform(1 - host_drift, 1 + host_drift), rng.uniform(1 - gpu_drift, 1 + gpu_drift))
        for _ in range(processes)
    ]


def record(host: float, gpu: float, bound: str, eager_ms: float, compiled_ms: float | None):
    """One process: the step scales with the host (`bound` "launch") or with the GPU; the
    GPU-bound yardstick with the GPU, the launch-bound one with the host."""
    follow = host if bound == "launch" else gpu
    fastest = {
        "eager": eager_ms * follow,
        "eager_b": eager_ms * follow * 1.001,
        "yardstick": 2.0 * gpu,
        "yardstick_launch": 0.3 * host,
    }
    if compiled_ms is not None:
        fastest["compiled"] = compiled_ms * follow
    return {"step_ms": fastest["eager"], "fastest_ms": fastest}


def document(
    seed: int,
    bound: str,
    *,
    eager_ms: float = 13.0,
    compiled_ms: float = 4.0,
    host_drift: float = 0.2,
    gpu_drift: float = 0.01,
    launch: bool = True,
) -> dict:
    """A result of one eager reference and four variant processes on a drifting machine;
    `launch` False: a document from before the launch-bound yardstick."""
    factors = machine(seed, 5, host_drift, gpu_drift)
    records = [record(h, g, bound, eager_ms, compiled_ms) for h, g in factors]
    if not launch:
        for r in records:
            del r["fastest_ms"]["yardstick_launch"]
    eager = [
        {
            **records[0],
            "fastest_ms": {k: v for k, v in records[0]["fastest_ms"].items() if k != "compiled"},
        }
    ]
    doc = with_processes(
        step(eager_ms=eager_ms, variants=[variant(step_ms=compiled_ms)]), eager, [records[1:]]
    )
    return result(doc)


def records_of(doc: dict) -> list[Process]:
    s = parse(doc, "result.json").steps[0]
    assert s.eager is not None
    return [*(s.eager.processes or ()), *(s.variants[0].processes or ())]


def _words(choice: Choice) -> str:
    """How a row says the pick (report/row_words/speed.py)."""
    return yardstick_words(choice.yardstick, choice.timed_spreads())


def test_a_launch_bound_step_follows_the_launch_bound_yardstick() -> None:
    runs = [records_of(document(seed, "launch")) for seed in (1, 2)]
    choice = tracking_yardstick(runs, eager_values)
    assert choice.yardstick == LAUNCH_BOUND
    assert choice.spreads_pct[LAUNCH_BOUND] < 1 < choice.spreads_pct[GPU_BOUND]
    assert "normalised by the launch-bound yardstick" in _words(choice)


def test_a_gpu_bound_step_follows_the_gpu_bound_yardstick() -> None:
    runs = [records_of(document(seed, "gpu", gpu_drift=0.2, host_drift=0.2)) for seed in (1, 2)]
    choice = tracking_yardstick(runs, eager_values)
    assert choice.yardstick == GPU_BOUND
    assert "normalised by the GPU-bound yardstick" in _words(choice)


def test_documents_without_the_launch_yardstick_keep_the_gpu_bound_one_and_its_words() -> None:
    runs = [records_of(document(1, "launch")), records_of(document(2, "launch", launch=False))]
    choice = tracking_yardstick(runs, eager_values)
    assert choice.yardstick == GPU_BOUND and choice.spreads_pct[LAUNCH_BOUND] is None
    assert _words(choice) == "in units of the yardstick timed beside them"


def test_the_pooled_spread_ignores_a_change_between_runs() -> None:
    assert pooled_log_spread([[1.0, 1.0], [2.0, 2.0]]) == 0.0
    assert pooled_log_spread([[1.0], [2.0]]) is None


@pytest.mark.parametrize("seeds", [(1, 2), (3, 4), (5, 6)])
def test_an_aa_with_a_20_percent_host_drift_reads_no_change_on_a_launch_bound_step(seeds) -> None:
    """Base and head the same code, each process on a host ±20 % slower or faster: divided
    by the launch-bound yardstick the drift cancels; the matmul one would leave it."""
    base, head = (document(seed, "launch") for seed in seeds)
    judged = judge_documents(base, head)
    for metric in ("eager_step_ms", "compiled_step_ms"):
        row = judged.rows(metric=metric)[0]
        assert row.verdict == "pass", row_message(row)
        assert abs(row.change) < 1 and row.noise_pct < 2, row_message(row)
        assert "normalised by the launch-bound yardstick" in row_message(row)


def test_a_ten_percent_slowdown_of_a_launch_bound_step_stands_out_of_the_host_drift() -> None:
    judged = judge_documents(document(1, "launch"), document(2, "launch", eager_ms=14.3))
    row = judged.rows(metric="eager_step_ms")[0]
    assert row.change == pytest.approx(10.0, abs=1.0) and row.noise_pct < 2, row_message(row)


def test_a_gpu_bound_step_is_still_divided_by_the_gpu_bound_yardstick() -> None:
    base = document(1, "gpu", gpu_drift=0.2)
    head = document(2, "gpu", gpu_drift=0.2)
    row = judge_documents(base, head).rows(metric="eager_step_ms")[0]
    assert "normalised by the GPU-bound yardstick" in row_message(row)
    assert abs(row.change) < 1 and row.noise_pct < 2, row_message(row)


def test_every_child_times_both_yardsticks_in_the_same_rounds() -> None:
    from compilegate.child.timing import CpuTimer, interleaved_rounds, yardsticks
    from compilegate.results.processes import process_record

    sticks = yardsticks("cpu")
    assert sticks["yardstick_launch"].x.numel() == 64  # tiny: its time is the dispatcher's
    timed = interleaved_rounds(
        {"eager": lambda i: None, "eager_b": lambda i: None, **sticks},
        first_index=0,
        iterations=4,
        rounds=2,
        timer=CpuTimer(),
    )
    assert timed["yardstick_launch"]["rounds"] == timed["yardstick"]["rounds"] == [0, 0, 1, 1]
    from compilegate.results.process_report import ProcessReport

    part = ProcessReport.from_json({"timed": timed}, "eager")
    fastest = process_record(part).fastest_ms.to_json()
    assert set(fastest) == {"eager", "eager_b", "yardstick", "yardstick_launch"}


def test_against_a_history_the_row_keeps_the_gpu_bound_yardstick_the_history_is_in() -> None:
    from gate_docs import with_history

    base = document(1, "launch")
    base["steps"][0] = with_history(base["steps"][0])
    row = judge_documents(base, document(2, "launch")).rows(metric="eager_step_ms")[0]
    assert row.noise_source == "history"
    assert "in units of the yardstick timed beside them" in row_message(row)
    assert "launch-bound" not in row_message(row)
