"""Statistics on raw per-iteration samples: summaries, ratio confidence intervals, noise.

Design (see shared/reference/gpu-measurements.md): iteration times are autocorrelated
(a launch-bound step drifts ±20 % from block to block with the host), so treating
iterations as independent draws gives intervals that are far too narrow. The unit of
resampling is therefore the *round*: eager and compiled were timed back to back in each
round, and a block bootstrap over rounds keeps each round's drift together.

    speedup     = median(eager) / median(compiled), 95 % CI by round-block bootstrap
    A/A ratio   = median(eager A) / median(eager B), the same estimator on two identical
                  copies: the run's own noise
    noise_pct   = max(|A/A ci_low - 1|, |A/A ci_high - 1|) * 100
    detectable  = the larger of noise_pct and the speedup CI half-width (percent): the
                  smallest speed change this run can tell from its own noise

The bootstrap's interval is its standard error (of the log ratio) times the exact t
quantile for rounds − 1 degrees of freedom, the standard error scaled by √(R/(R−1)): the
plain percentile interval of a bootstrap over R blocks is too narrow for few blocks (from
2 rounds it covered the true ratio in about half of simulated runs; this one covers it in
≥ 90 % from 2 rounds on: tests/unit/gate/test_noise_simulation.py).

Across runs (the gate), what one process measures is compared with what another measured
days earlier. Each process's fastest iteration is its summary there (on a busy machine
a median mostly measures the neighbours: see `fastest`), and the processes of both runs
are compared with a two-sample t interval (`compare_processes`).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .model import Ratio, RatioMethod, Timing

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def summarize(samples: Sequence[float], rounds: Sequence[int] | None = None) -> Timing:
    """The `timing` object of the result schema: raw samples and their summary."""
    ordered = sorted(samples)
    return Timing(
        median=statistics.median(ordered),
        mean=statistics.fmean(ordered),
        stdev=statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        p10=quantile(ordered, 0.10),
        p90=quantile(ordered, 0.90),
        min=ordered[0],
        max=ordered[-1],
        n=len(ordered),
        samples=tuple(samples),
        rounds=tuple(rounds) if rounds is not None else None,
    )


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted data."""
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class RatioEstimate:
    median: float
    ci_low: float
    ci_high: float
    confidence: float = CONFIDENCE
    # Round-block bootstrap: standard error × t(rounds − 1) on the log ratio.
    method: RatioMethod = RatioMethod.BOOTSTRAP_MEDIAN

    @property
    def ratio(self) -> Ratio:
        """The estimate as the result document records a ratio."""
        return Ratio(self.median, self.ci_low, self.ci_high, self.confidence, self.method)

    @property
    def half_width_pct(self) -> float:
        return max(self.median - self.ci_low, self.ci_high - self.median) / self.median * 100

    @property
    def distance_from_one_pct(self) -> float:
        """How far the interval reaches from 1.0, in percent (the A/A noise)."""
        return max(abs(self.ci_low - 1.0), abs(self.ci_high - 1.0)) * 100


def ratio_of_medians(
    numerator: Sequence[float],
    numerator_rounds: Sequence[int],
    denominator: Sequence[float],
    denominator_rounds: Sequence[int],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> RatioEstimate:
    """median(numerator)/median(denominator) with a round-block bootstrap CI."""
    return _ratio_bootstrap(
        statistics.median,
        numerator,
        numerator_rounds,
        denominator,
        denominator_rounds,
        resamples=resamples,
        seed=seed,
        method=RatioMethod.BOOTSTRAP_MEDIAN,
    )


def ratio_of_means(
    numerator: Sequence[float],
    numerator_rounds: Sequence[int],
    denominator: Sequence[float],
    denominator_rounds: Sequence[int],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> RatioEstimate:
    """mean(numerator)/mean(denominator) (totals: outliers included), round-block bootstrap
    CI as in ratio_of_medians."""
    return _ratio_bootstrap(
        statistics.fmean,
        numerator,
        numerator_rounds,
        denominator,
        denominator_rounds,
        resamples=resamples,
        seed=seed,
        method=RatioMethod.BOOTSTRAP_MEAN,
    )


def _ratio_bootstrap(
    center: Any,
    numerator: Sequence[float],
    numerator_rounds: Sequence[int],
    denominator: Sequence[float],
    denominator_rounds: Sequence[int],
    *,
    resamples: int,
    seed: int,
    method: RatioMethod,
) -> RatioEstimate:
    by_round_num = _group(numerator, numerator_rounds)
    by_round_den = _group(denominator, denominator_rounds)
    round_ids = sorted(set(by_round_num) & set(by_round_den))
    point = center(numerator) / center(denominator)
    if len(round_ids) < 2:
        return RatioEstimate(point, point, point, method=RatioMethod.SINGLE_ROUND)
    rng = random.Random(seed)
    estimates = []
    for _ in range(resamples):
        picked = [rng.choice(round_ids) for _ in round_ids]
        num = [x for r in picked for x in by_round_num[r]]
        den = [x for r in picked for x in by_round_den[r]]
        estimates.append(center(num) / center(den))
    blocks = len(round_ids)
    spread = statistics.stdev(math.log(e) for e in estimates) * math.sqrt(blocks / (blocks - 1))
    half_width = t_quantile(1 - (1 - CONFIDENCE) / 2, blocks - 1) * spread
    return RatioEstimate(
        point, point * math.exp(-half_width), point * math.exp(half_width), method=method
    )


def _group(samples: Sequence[float], rounds: Sequence[int]) -> dict[int, list[float]]:
    grouped: dict[int, list[float]] = {}
    for value, round_no in zip(samples, rounds):
        grouped.setdefault(round_no, []).append(value)
    return grouped


def break_even_steps(compile_s: float | None, eager_ms: float, compiled_ms: float) -> float | None:
    """Steps after which compiling has paid for itself; None when compiled is not faster."""
    saving_s = (eager_ms - compiled_ms) / 1e3
    if compile_s is None or saving_s <= 0:
        return None
    return max(compile_s, 0.0) / saving_s


@functools.lru_cache(maxsize=256)
def t_quantile(probability: float, df: int) -> float:
    """The Student t quantile for `df` degrees of freedom (exact, by bisection on the CDF)."""
    if not 0.5 <= probability < 1 or df < 1:
        raise ValueError(
            f"t_quantile needs 0.5 <= probability < 1 and df >= 1, got {probability}, {df}"
        )
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < probability:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if _t_cdf(mid, df) < probability:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def fastest(samples: Sequence[float]) -> float:
    """A process's summary for comparisons across runs: its fastest iteration.

    On a shared CPU a neighbour's load preempts and evicts the step in most iterations:
    on a 2-core runner at load average 5-9, the median step time of the same code
    scattered from process to process by 15-80 % (coefficient of variation), its fastest
    iteration by 3-6 %. An iteration is never faster than the machine allows, so the
    fastest one is the least disturbed measurement there is.
    """
    return min(samples)


@dataclass(frozen=True)
class ProcessComparison:
    """How one run's processes differ from another's: the change of the geometric mean of
    per-process values, and the 95 % half-width of that change (both in percent)."""

    change_pct: float
    noise_pct: float | None
    df: int
    processes: tuple[int, int]
    paired: bool = False


def compare_processes(base: Sequence[float], current: Sequence[float]) -> ProcessComparison:
    """Two-sample t interval on the logs of per-process values (times or ratios).

    A process has its own luck (memory layout, the core, what the neighbours did), which no
    interval inside the process can see; the spread between the processes of a run does.
    Both runs' spreads are pooled (df = n_base + n_current − 2, exact t quantile), so two
    runs of four processes give 6 degrees of freedom, where one run of two gave one
    (t = 12.7). The noise is None when there are no degrees of freedom (one process each).
    """
    logs_base = [math.log(v) for v in base]
    logs_cur = [math.log(v) for v in current]
    n_base, n_cur = len(logs_base), len(logs_cur)
    if not n_base or not n_cur:
        raise ValueError("compare_processes needs at least one value on each side")
    change = statistics.fmean(logs_cur) - statistics.fmean(logs_base)
    df = n_base + n_cur - 2
    noise_pct = None
    if df >= 1:
        squares = _sum_of_squares(logs_base) + _sum_of_squares(logs_cur)
        pooled_sd = math.sqrt(squares / df)
        half_width = (
            t_quantile(1 - (1 - CONFIDENCE) / 2, df) * pooled_sd * math.sqrt(1 / n_base + 1 / n_cur)
        )
        noise_pct = math.expm1(half_width) * 100
    return ProcessComparison(math.expm1(change) * 100, noise_pct, df, (n_base, n_cur))


def compare_sides(
    base: Sequence[float], current: Sequence[float], *, paired: bool
) -> ProcessComparison:
    """Paired (compare_pairs) when the values are pairs of a paired run, at least two of
    them; else the two-sample interval (compare_processes)."""
    if paired and len(base) == len(current) >= 2:
        return compare_pairs(base, current)
    return compare_processes(base, current)


# The fewest pairs a paired comparison of step speed can judge with. Its interval is
# t(pairs − 1) × sd / √pairs: from 2 pairs that is 8.98 × the spread of one pair's log ratio
# (t = 12.71 at one degree of freedom), from 3 pairs 2.48 ×, from 4 1.59 ×. On the 2-core
# runner under load one pair's speed ratio spreads 2.2 % (±3.5 % from 4 pairs,
# docs/paired-mode.md): 2 pairs give ±20 %, past twice the 5 % threshold, where no change
# under 40 % is decided (gate/rules.DECIDABLE_NOISE_FACTOR, DECISIVE_MARGIN); 3 give ±5.5 %.
# A disturbed pair made it ±1660 % from 2 (issue 54): such a figure means nothing.
MIN_PAIRS = 3


def compare_pairs(base: Sequence[float], current: Sequence[float]) -> ProcessComparison:
    """Paired t interval on the log ratios current[i] / base[i] (a paired run: process i of
    each side ran next to the other, on one machine, the sides alternating A B B A).

    What the machine did while a pair ran (load, clock, heat) falls on both of its
    processes and leaves their ratio; only what differs within a pair is noise. The change
    is the geometric mean of the ratios, the noise the 95 % half-width of the mean log ratio
    (exact t quantile, pairs − 1 degrees of freedom). With few pairs a sign or Wilcoxon test
    cannot decide at all (four pairs: p ≥ 0.125 whatever they show), the t interval can.
    None noise for one pair.
    """
    if len(base) != len(current) or not base:
        raise ValueError("compare_pairs needs the same number (≥ 1) of values on each side")
    logs = [math.log(c) - math.log(b) for b, c in zip(base, current)]
    n = len(logs)
    change = statistics.fmean(logs)
    noise_pct = None
    if n >= 2:
        sd = math.sqrt(_sum_of_squares(logs) / (n - 1))
        half_width = t_quantile(1 - (1 - CONFIDENCE) / 2, n - 1) * sd / math.sqrt(n)
        noise_pct = math.expm1(half_width) * 100
    return ProcessComparison(math.expm1(change) * 100, noise_pct, n - 1, (n, n), paired=True)


def process_noise_pct(values: Sequence[float]) -> float | None:
    """The noise one run's processes would give a comparison with an identical run, percent
    (compare_processes with this run on both sides); None for fewer than two processes."""
    if len(values) < 2:
        return None
    return compare_processes(values, values).noise_pct


def _sum_of_squares(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    return sum((v - mean) ** 2 for v in values)


def _t_cdf(t: float, df: int) -> float:
    """P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2) / 2 with x = df / (df + t²)."""
    x = df / (df + t * t)
    return 1 - 0.5 * _regularized_beta(x, df / 2, 0.5)


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by its continued fraction (modified Lentz), as in Numerical Recipes §6.4."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(log_front + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1 - _regularized_beta(1 - x, b, a)
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * result / a
