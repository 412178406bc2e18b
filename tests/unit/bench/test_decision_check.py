"""bench/decision_check.py's reading of two training runs: the crossover is where the
compiled run became and stayed ahead, and the prediction is judged against it."""

from __future__ import annotations

import importlib.util

import pytest

from repo_helpers import REPO_ROOT

BENCH = REPO_ROOT / "bench" / "decision_check.py"
spec = importlib.util.spec_from_file_location("decision_check", BENCH)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def cumulative(first_s: float, step_s: float, n: int) -> list[float]:
    return [first_s + step_s * (i + 1) for i in range(n)]


def test_crossover_is_where_compiled_became_and_stayed_ahead():
    eager = cumulative(0.0, 0.010, 4000)
    compiled = cumulative(20.0, 0.005, 4000)  # 20 s / 5 ms saved: 4,000 steps
    assert check.crossover(eager, compiled) == 4000
    wobbly = list(compiled)
    wobbly[10] = 0.0  # ahead once early, then behind again: not a crossover
    assert check.crossover(eager, wobbly) == 4000
    assert check.crossover(eager, cumulative(30.0, 0.005, 4000)) is None


def test_a_pair_is_judged_against_every_prediction():
    eager = cumulative(0.0, 0.010, 8000)
    compiled = cumulative(20.0, 0.005, 8000)
    paying = {
        "decision": "compile",
        "speedup": {"estimate": 2.0},
        "break_even_steps": {"estimate": 4100.0, "low": 3500.0, "high": 5000.0},
    }
    wrong = {
        "decision": "stay_eager",
        "speedup": {"estimate": 1.0},
        "break_even_steps": {"estimate": None, "low": 9000.0, "high": None},
    }
    judged = check.judge(eager, compiled, 4000, [paying, wrong])
    assert judged["crossover"] == 4000 and judged["inside"] == [True, False]
    at_two = judged["at"][-1]
    assert at_two["steps"] == 8000 and at_two["ahead_s"] == pytest.approx(20.0)
    assert at_two["decisions"] == ["compile", "stay_eager"]
    assert at_two["right"] == [True, False]
    assert judged["at"][0]["decisions"][0] == "stay_eager"  # 2,000 steps: none pays


def test_a_step_predicted_never_to_pay_is_inside_when_it_never_crossed():
    eager = cumulative(0.0, 0.010, 2000)
    compiled = cumulative(20.0, 0.012, 2000)
    never = {"decision": "stay_eager", "speedup": {"estimate": 0.8}, "break_even_steps": None}
    judged = check.judge(eager, compiled, 1000, [never])
    assert judged["crossover"] is None and judged["inside"] == [True]
    assert all(a["right"] == [True] for a in judged["at"])


def test_a_run_too_short_to_cross_projects_the_crossover_without_counting_it():
    eager = cumulative(0.0, 0.010, 4000)
    compiled = cumulative(30.0, 0.005, 4000)  # 30 s / 5 ms: crosses at 6,000
    judged = check.judge(eager, compiled, 2000, [])
    assert judged["crossover"] is None
    assert judged["summary"]["projected"] == pytest.approx(6000)


def test_a_levers_prediction_is_the_one_checked():
    """--lever: the artifacts' or regional compilation's interval is the one checked; a
    point (no interval) is never "inside"; the observed ÷ predicted ratio says how near."""
    rec = {"break_even_steps": {"estimate": 4000, "low": 3000, "high": 5000}, "decision": "x"}
    shipped = {"estimate": 1000, "low": 800, "high": 1300}
    variant = {
        "payoff": {"artifacts_break_even_steps": shipped},
        "regional": {"break_even_steps": {"estimate": 2000, "low": 2000, "high": 2000}},
    }
    assert check.lever_prediction(rec, variant, "cold") is rec
    artifacts = check.lever_prediction(rec, variant, "artifacts")
    assert artifacts["break_even_steps"] == shipped
    assert artifacts["cold_break_even_steps"] == rec["break_even_steps"]
    regional = check.lever_prediction(rec, variant, "regional")
    assert regional["break_even_steps"]["estimate"] == pytest.approx(2000)  # 6 s / 3 ms
    assert check.lever_prediction(rec, {}, "regional")["break_even_steps"] is None
    eager = cumulative(0.0, 0.010, 4000)
    compiled = cumulative(6.0, 0.007, 4000)  # crosses at 2,000
    judged = check.judge(eager, compiled, 2000, [regional])
    assert judged["inside"] == [None]
    assert judged["summary"]["observed_over_predicted"] == pytest.approx(1.0, abs=0.01)
