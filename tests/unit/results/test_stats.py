from __future__ import annotations

import random

import pytest

from compilegate.results.model import Ratio, RatioMethod, part_of
from compilegate.results.stats import (
    break_even_steps,
    quantile,
    ratio_of_means,
    ratio_of_medians,
    summarize,
)


def rounds_of(n: int, rounds: int) -> list[int]:
    return [i * rounds // n for i in range(n)]


def test_summarize_keeps_raw_samples_in_order() -> None:
    out = summarize([3.0, 1.0, 2.0, 10.0], [0, 0, 1, 1])
    assert out.samples == (3.0, 1.0, 2.0, 10.0) and out.rounds == (0, 0, 1, 1)
    assert out.median == 2.5 and out.min == 1.0 and out.max == 10.0 and out.n == 4


def test_quantile_interpolates() -> None:
    assert quantile([0.0, 10.0], 0.5) == 5.0
    assert quantile([1.0, 2.0, 3.0], 0.0) == 1.0


def test_ratio_ci_covers_true_speedup_and_excludes_one() -> None:
    rng = random.Random(1)
    eager = [10.0 * rng.lognormvariate(0, 0.05) for _ in range(100)]
    compiled = [5.0 * rng.lognormvariate(0, 0.05) for _ in range(100)]
    est = ratio_of_medians(eager, rounds_of(100, 10), compiled, rounds_of(100, 10))
    assert est.ci_low < 2.0 < est.ci_high
    assert est.ci_low > 1.8 and est.ci_high < 2.2


def test_block_bootstrap_widens_interval_under_round_drift() -> None:
    """Rounds that drift together (a launch-bound GPU step) must give a wide interval."""
    rng = random.Random(2)
    drift = [rng.uniform(0.8, 1.2) for _ in range(10)]
    a = [10.0 * drift[i // 10] * rng.lognormvariate(0, 0.01) for i in range(100)]
    b = [
        10.0 * drift[i // 10] * (1.15 if i // 10 % 2 else 0.87) * rng.lognormvariate(0, 0.01)
        for i in range(100)
    ]
    est = ratio_of_medians(a, rounds_of(100, 10), b, rounds_of(100, 10))
    assert est.ci_high - est.ci_low > 0.05


def test_identical_sides_have_small_noise() -> None:
    rng = random.Random(3)
    a = [10 + rng.gauss(0, 0.1) for _ in range(60)]
    b = [10 + rng.gauss(0, 0.1) for _ in range(60)]
    est = ratio_of_medians(a, rounds_of(60, 6), b, rounds_of(60, 6))
    assert est.distance_from_one_pct < 2.0


def test_single_round_has_no_interval() -> None:
    est = ratio_of_medians([2.0, 2.0], [0, 0], [1.0, 1.0], [0, 0])
    assert est.median == est.ci_low == est.ci_high == 2.0
    assert est.ratio.to_json()["method"] == "single_round"


def test_a_ratio_records_how_its_interval_was_found_as_a_code() -> None:
    """Issue 53: a code, not a sentence; an older document's sentence reads as recorded."""
    two_rounds = ([2.0, 2.1], [0, 1], [1.0, 1.1], [0, 1])
    assert ratio_of_medians(*two_rounds).ratio.to_json()["method"] == "bootstrap_median"
    assert ratio_of_means(*two_rounds).ratio.to_json()["method"] == "bootstrap_mean"
    sentence = "round-block bootstrap of the median ratio: standard error x t(rounds - 1)"
    for recorded, read in (("bootstrap_mean", RatioMethod.BOOTSTRAP_MEAN), (sentence, sentence)):
        raw = {"median": 2.0, "ci_low": 1.9, "ci_high": 2.1, "method": recorded}
        ratio = part_of(Ratio, raw)
        assert ratio.method == read and ratio.to_json() == raw


@pytest.mark.parametrize(
    ("compile_s", "eager_ms", "compiled_ms", "expected"),
    [
        (10.0, 12.0, 10.0, 5000.0),
        (10.0, 10.0, 12.0, None),
        (None, 2.0, 1.0, None),
        (-1.0, 2.0, 1.0, 0.0),
    ],
)
def test_break_even(compile_s, eager_ms, compiled_ms, expected) -> None:
    assert break_even_steps(compile_s, eager_ms, compiled_ms) == expected
