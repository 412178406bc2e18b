"""The break-even interval is a prediction for the user's next run, checked by simulation.

The user's next run is compiled or eager, under that day's conditions (the machine's
mood: neighbours, clocks, memory layout), which slow its steps and its compile alike;
whichever way they run, the conditions are the same, so they cancel in the break-even.
What does not cancel is each run's own luck: how far its speedup lands off the mean, how
long its compile takes against its steps. compilegate's processes each time eager and
compiled side by side under one process's conditions. Simulated here: every process (and
the next run) draws conditions that scale its eager and compiled steps and its compile
seconds together, plus each copy's own noise and the compile's own; the cold compile and
the warm compiles draw the same relative spread (what the interval borrows from one cold
compile). The next run's break-even falls inside the 95 % interval in about 95 % of the
simulations.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest
from decision_docs import process, recommend

EAGER_MS, COMPILED_MS, COMPILE_S, WARM_S = 14.0, 9.5, 25.0, 3.0
CONDITIONS_SD, COPY_SD, COMPILE_SD = 0.10, 0.02, 0.08
PROCESSES, SIMULATIONS = 4, 1500
MEAN_BREAK_EVEN = COMPILE_S * 1e3 / (EAGER_MS - COMPILED_MS)  # 5,556 steps


def one_process(rng: random.Random, compile_s: float) -> tuple[float, float, float]:
    """(eager ms, compiled ms, compile s) under one draw of the conditions."""
    conditions = math.exp(rng.gauss(0, CONDITIONS_SD))
    eager = EAGER_MS * conditions * math.exp(rng.gauss(0, COPY_SD))
    compiled = COMPILED_MS * conditions * math.exp(rng.gauss(0, COPY_SD))
    return eager, compiled, compile_s * conditions * math.exp(rng.gauss(0, COMPILE_SD))


def measured_variant(rng: random.Random) -> dict:
    records = []
    for number in range(PROCESSES):
        cold = number == 0
        eager, compiled, wall = one_process(rng, COMPILE_S if cold else WARM_S)
        records.append(
            process(
                eager / compiled,
                eager_ms=eager,
                cache="cold" if cold else "warm",
                compile_wall_s=wall,
            )
        )
    return {
        "id": "default",
        "mode": "default",
        "compile_target": "model",
        "status": "ok",
        "compile_s": records[0]["compile_wall_s"],
        "numerics": {"status": "pass"},
        "processes": records,
    }


def next_run_break_even(rng: random.Random) -> float:
    """The break-even of the user's next run: compiled or eager under the same conditions."""
    eager, compiled, compile_s = one_process(rng, COMPILE_S)
    return math.inf if eager <= compiled else compile_s * 1e3 / (eager - compiled)


def inside(found: dict, value: float) -> bool:
    high = math.inf if found["high"] is None else found["high"]
    return found["low"] <= value <= high


def test_the_interval_holds_the_next_runs_break_even_95_percent_of_the_time() -> None:
    rng = random.Random(17)
    covered = 0
    widths, decisions, wrong = [], [], 0
    run_steps = round(2 * MEAN_BREAK_EVEN)
    for _ in range(SIMULATIONS):
        advice = recommend([measured_variant(rng)], steps_per_run=run_steps)
        found = advice["break_even_steps"]
        truth = next_run_break_even(rng)
        covered += inside(found, truth)
        widths.append((found["high"] or math.inf) / found["low"])
        decisions.append(advice["decision"])
        wrong += advice["decision"] == "compile" and truth > run_steps
    coverage = covered / SIMULATIONS
    assert 0.93 <= coverage <= 0.99, coverage  # measured: 0.959
    # Not bought with uselessly wide intervals: a run twice the break-even mostly decides
    # (measured: high / low 2.25 at the median, "compile" in 86 %, never "stay eager"),
    # and a "compile" is right for the next run.
    assert statistics.median(widths) < 3, statistics.median(widths)
    assert decisions.count("compile") / SIMULATIONS > 0.75, decisions.count("compile")
    assert decisions.count("stay_eager") == 0
    assert wrong / max(1, decisions.count("compile")) < 0.025, wrong


def test_the_machines_conditions_cancel_a_runs_own_luck_does_not() -> None:
    """The same processes, slower by 30 % in every step and compile, give the same
    interval; a speedup that spreads more between processes gives a wider one."""
    rng = random.Random(3)
    doc = measured_variant(rng)
    slower = measured_variant(random.Random(3))
    for record in slower["processes"]:
        record["compile_wall_s"] *= 1.3
        for key, values in record["samples_ms"].items():
            record["samples_ms"][key] = [v * 1.3 for v in values]
    slower["compile_s"] *= 1.3
    found = recommend([doc])["break_even_steps"]
    assert recommend([slower])["break_even_steps"] == {
        k: (v if v is None else pytest.approx(v)) for k, v in found.items()
    }
    spread = measured_variant(random.Random(3))
    for record, factor in zip(spread["processes"], (1.06, 0.94, 1.05, 0.95)):
        record["samples_ms"]["compiled"] = [v * factor for v in record["samples_ms"]["compiled"]]
    wider = recommend([spread])["break_even_steps"]
    assert wider["high"] / wider["low"] > found["high"] / found["low"]
