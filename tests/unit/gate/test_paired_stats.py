"""Paired differences (stats.compare_pairs): load that hits both processes of a pair cancels,
checked by simulation, not only by example."""

from __future__ import annotations

import math
import random

import pytest

from compilegate.gate.rules import classify_speed_change
from compilegate.results.stats import compare_pairs, compare_processes, compare_sides


def test_the_change_is_the_geometric_mean_of_the_ratios() -> None:
    comparison = compare_pairs([10.0, 20.0], [11.0, 22.0])
    assert comparison.change_pct == pytest.approx(10.0)
    assert comparison.noise_pct == pytest.approx(0.0, abs=1e-9)  # identical ratios
    assert comparison.paired and comparison.df == 1 and comparison.processes == (2, 2)


def test_one_pair_has_no_noise_and_unequal_sides_are_refused() -> None:
    assert compare_pairs([10.0], [11.0]).noise_pct is None
    with pytest.raises(ValueError):
        compare_pairs([10.0, 11.0], [10.0])


def test_compare_sides_pairs_only_what_can_be_paired() -> None:
    assert compare_sides([1.0, 2.0], [1.0, 2.0], paired=True).paired
    assert not compare_sides([1.0, 2.0], [1.0, 2.0], paired=False).paired
    assert not compare_sides([1.0, 2.0, 3.0], [1.0, 2.0], paired=True).paired  # unequal


def simulate(change: float, pairs: int, load_sd: float, own_sd: float, seed: int):
    """One paired run: each pair shares a load factor (what the machine did meanwhile), each
    process has its own luck."""
    rng = random.Random(seed)
    base, head = [], []
    for _ in range(pairs):
        load = math.exp(rng.gauss(0, load_sd))
        base.append(1.0 * load * math.exp(rng.gauss(0, own_sd)))
        head.append((1 + change) * load * math.exp(rng.gauss(0, own_sd)))
    return base, head


def verdict(comparison) -> str:
    return classify_speed_change(comparison.change_pct, 5.0, comparison.noise_pct)


def test_load_shared_by_a_pair_cancels_where_two_samples_cannot_see_through_it() -> None:
    """Load moving by ±15 % from pair to pair, each process ±2 % on its own: the paired
    interval catches a 10 % slowdown in nearly every run; the two-sample one, which counts
    the load as noise, almost never."""
    runs = 400
    paired_hits = unpaired_hits = 0
    for seed in range(runs):
        base, head = simulate(0.10, 4, 0.15, 0.02, seed)
        paired_hits += verdict(compare_pairs(base, head)) == "regression"
        unpaired_hits += verdict(compare_processes(base, head)) == "regression"
    assert paired_hits / runs >= 0.9
    assert unpaired_hits / runs <= 0.3


@pytest.mark.parametrize("pairs", [3, 4, 8])
def test_unchanged_code_is_a_regression_rarely_and_the_interval_covers(pairs: int) -> None:
    """A/A under the same load: false regressions at most the interval's 2.5 % tail (the
    threshold only lowers it), and the 95 % interval covers no change in ≥ 93 % of runs."""
    runs = 2000
    false_alarms = covered = 0
    for seed in range(runs):
        base, head = simulate(0.0, pairs, 0.15, 0.04, 10_000 + seed)
        comparison = compare_pairs(base, head)
        false_alarms += verdict(comparison) == "regression"
        covered += abs(comparison.change_pct) <= comparison.noise_pct
    assert false_alarms / runs <= 0.025
    assert covered / runs >= 0.93
