"""The break-even interval is a prediction for the user's next run, checked by simulation.

A training run is one eager process or one compiled process with one cold compile; each
lands off the mean by its own luck (the machine's state while it ran: neighbours, memory
layout, the core). compilegate's processes time eager and compiled side by side, sharing
that luck; the user's two runs do not share it. Simulated here: each process draws a
factor shared by its eager and compiled copies plus a little of each copy's own, the cold
compile and the warm compiles draw the same relative spread (what the interval borrows
from one cold compile), and the next pair of runs draws afresh. Its break-even falls
inside the 95 % interval in about 95 % of the simulations; the confidence interval of
the mean break-even, which the interval was before, in about 82 %.
"""

from __future__ import annotations

import math
import random
import statistics

from decision_docs import process

from compilegate.results.payoff import measure
from compilegate.results.recommendation import recommend

EAGER_MS, COMPILED_MS, COMPILE_S, WARM_S = 14.0, 9.5, 25.0, 3.0
PROCESS_SD, COPY_SD, COMPILE_SD = 0.05, 0.02, 0.10
PROCESSES, SIMULATIONS = 4, 1500
MEAN_BREAK_EVEN = COMPILE_S * 1e3 / (EAGER_MS - COMPILED_MS)  # 5,556 steps


def measured_variant(rng: random.Random) -> dict:
    records = []
    for number in range(PROCESSES):
        shared = rng.gauss(0, PROCESS_SD)
        eager = EAGER_MS * math.exp(shared + rng.gauss(0, COPY_SD))
        compiled = COMPILED_MS * math.exp(shared + rng.gauss(0, COPY_SD))
        cold = number == 0
        wall = (COMPILE_S if cold else WARM_S) * math.exp(rng.gauss(0, COMPILE_SD))
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
        "status": "ok",
        "compile_s": records[0]["compile_wall_s"],
        "numerics": {"status": "pass"},
        "processes": records,
    }


def next_run_break_even(rng: random.Random) -> float:
    """The break-even the user's next eager and compiled training runs see."""
    eager = EAGER_MS * math.exp(rng.gauss(0, PROCESS_SD) + rng.gauss(0, COPY_SD))
    compiled = COMPILED_MS * math.exp(rng.gauss(0, PROCESS_SD) + rng.gauss(0, COPY_SD))
    compile_s = COMPILE_S * math.exp(rng.gauss(0, COMPILE_SD))
    return math.inf if eager <= compiled else compile_s * 1e3 / (eager - compiled)


def inside(found: dict, value: float) -> bool:
    high = math.inf if found["high"] is None else found["high"]
    return found["low"] <= value <= high


def test_the_interval_holds_the_next_runs_break_even_95_percent_of_the_time() -> None:
    rng = random.Random(17)
    covered = mean_ci_covered = 0
    widths, decisions, wrong = [], [], 0
    run_steps = round(2 * MEAN_BREAK_EVEN)
    for _ in range(SIMULATIONS):
        doc = measured_variant(rng)
        advice = recommend([doc], steps_per_run=run_steps)
        found = advice["break_even_steps"]
        truth = next_run_break_even(rng)
        covered += inside(found, truth)
        mean_ci_covered += inside(mean_break_even_ci(doc), truth)
        widths.append((found["high"] or math.inf) / found["low"])
        decisions.append(advice["decision"])
        wrong += advice["decision"] == "compile" and truth > run_steps
    coverage = covered / SIMULATIONS
    assert 0.93 <= coverage <= 0.99, coverage  # measured: 0.953
    assert mean_ci_covered / SIMULATIONS < 0.88, mean_ci_covered / SIMULATIONS  # 0.824
    # Not bought with uselessly wide intervals: a run twice the break-even mostly decides
    # (measured: high / low 3.3 at the median, "compile" in 66 %, never "stay eager"), and
    # a "compile" is right for the next run.
    assert statistics.median(widths) < 4, statistics.median(widths)
    assert decisions.count("compile") / SIMULATIONS > 0.55, decisions.count("compile")
    assert decisions.count("stay_eager") == 0
    assert wrong / max(1, decisions.count("compile")) < 0.025, wrong


def mean_break_even_ci(doc: dict) -> dict:
    """What the interval was before: the 95 % interval of the mean break-even alone (the
    means' own uncertainty, no new draw), for comparison."""
    m = measure(doc)
    assert m is not None and m.compile_s is not None
    gain = 1 - 1 / m.speedup.estimate
    steps = m.compile_s.estimate * 1e3 / (m.eager_ms.estimate * gain)
    gain_low = 1 - 1 / m.speedup.low
    up = math.log(gain / gain_low)
    half = math.hypot(up, m.eager_ms.half_width, m.compile_s.half_width)
    return {"low": steps * math.exp(-half), "high": steps * math.exp(half)}
