"""What compiling a variant saves over a run, with 95 % intervals from every process.

The user pays totals (a training run is a sum of step times), so the per-step cost is the
mean of the timed iterations, outliers included; medians stay for the noise-robust gate.
Each process of a variant timed eager and compiled side by side, so each gives one paired
value; the spread between processes (their own luck: load, memory layout, the core) is
what an interval for the next run must carry, so the processes are pooled:

    per process p    eager_p = mean of its eager iterations (both copies), compiled_p = mean
                     of its compiled iterations (ms)
    speedup          geometric mean over processes of eager_p / compiled_p; 95 % t interval
                     on the logs (df = processes − 1); from one process, the round-block
                     bootstrap of mean(eager) / mean(compiled) inside it (stats.py)
    eager step       geometric mean of eager_p, t interval on the logs likewise
    saving per step  d = eager × (1 − 1/speedup), ms
    compile cost     mean wall seconds of every cold compile measured (compile_cost's
                     cold_samples, else compile_s), t interval on the logs from ≥ 2 samples;
                     from one, the warm compiles' spread (cold_compile_estimate);
                     the late recompiles an epoch schedule found included (late_recompile_s)
    break-even       compile cost / d steps, with a 95 % interval for the next run (a
                     prediction interval): the user's run lands off the mean by its own
                     luck. Whichever way they run it, compiled or eager, the run has the
                     same conditions (the machine's mood slows its steps and its compile
                     alike: that cancels); what does not cancel is how far its speedup
                     lands off the mean and how long its compile takes against its steps.
                     On the log scale: the uncertainty of the means (the speedup's gain,
                     the eager step, over √processes; the compile over √compiles) plus one
                     new draw of the gain (the processes' speedup spread) and of the
                     compile relative to the step (the spread of warm compile seconds over
                     their own process's eager step time; else the compile's own spread);
                     t quantile at the Welch–Satterthwaite degrees of freedom. Unbounded
                     above when the speedup's interval reaches 1 or one run's saving may
                     reach zero
    saving over S    S·d − C; its interval C·(S/high − 1) … C·(S/low − 1) from the
                     break-even's, so it is above zero exactly when the whole break-even
                     interval lies within S

The warm-cache break-even does the same with the compile seconds of the later processes,
which compile from the cache the first one filled: what a second run of the same job pays.
Deterministic for the same document (the one-process bootstrap has a fixed seed).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from .model import (
    BreakEvenInterval,
    CompileEstimate,
    Interval,
    Process,
    SpeedupEstimate,
    SpeedupEstimator,
    Variant,
)
from .processes import variant_processes
from .stats import CONFIDENCE, ratio_of_means, t_quantile

MAX_PROCESSES = 10  # the most variant_processes a config may ask for (config schema)
NORMAL_95 = 1.959964


@dataclass(frozen=True)
class LogEstimate:
    """A positive estimate with a symmetric 95 % interval on the log scale.

    `sd_log` is the spread of one sample's log (what more samples shrink: with_samples);
    `n` the samples behind the estimate; `half_width` the log half-width they give."""

    estimate: float
    sd_log: float
    n: int
    half_width: float
    df: int | None = None  # degrees of freedom of sd_log; None: n − 1 (0: no spread known)

    @property
    def spread_df(self) -> int:
        return self.n - 1 if self.df is None else self.df

    @property
    def low(self) -> float:
        return self.estimate * math.exp(-self.half_width)

    @property
    def high(self) -> float:
        return self.estimate * math.exp(self.half_width)

    def with_samples(self, n: int) -> LogEstimate:
        """The same estimate and spread as if `n` samples had been taken."""
        df = None if self.df is None else self.df + n - self.n
        return replace(self, n=n, half_width=_t_half_width(self.sd_log, n), df=df)

    @property
    def compile_estimate(self) -> CompileEstimate:
        """As the result document records a compile time's estimate."""
        return CompileEstimate(estimate=self.estimate, low=self.low, high=self.high)

    def speedup_estimate(self, estimator: SpeedupEstimator) -> SpeedupEstimate:
        """As the result document records a speedup, its estimator named."""
        return SpeedupEstimate(self.estimate, self.low, self.high, estimator)


def log_estimate(values: Sequence[float]) -> LogEstimate:
    """Geometric mean of positive values with its 95 % t interval (a point for one value)."""
    logs = [math.log(v) for v in values]
    sd = statistics.stdev(logs) if len(logs) > 1 else 0.0
    return LogEstimate(
        math.exp(statistics.fmean(logs)), sd, len(logs), _t_half_width(sd, len(logs))
    )


def _t_half_width(sd_log: float, n: int) -> float:
    if n < 2:
        return sd_log * NORMAL_95
    return t_quantile(1 - (1 - CONFIDENCE) / 2, n - 1) * sd_log / math.sqrt(n)


@dataclass(frozen=True)
class Measured:
    """What one variant's processes measured, reduced to the inputs of the payoff."""

    speedup: LogEstimate
    eager_ms: LogEstimate
    compiled_ms: LogEstimate
    compile_s: LogEstimate | None
    warm_compile_s: LogEstimate | None
    estimator: SpeedupEstimator
    compile_per_step: LogEstimate | None = None  # warm compile s ÷ its process's eager ms
    # From the first process's portable cache artifacts (config cache_artifacts), or None.
    artifacts_compile_s: LogEstimate | None = None

    @property
    def processes(self) -> int:
        return self.speedup.n

    def with_processes(self, n: int) -> Measured:
        """The same estimates and spreads as if `n` processes had been timed. A compile
        cost that borrows the warm compiles' spread gets one more warm compile a process."""
        compile_s = self.compile_s
        if compile_s is not None and compile_s.n == 1 and compile_s.df is not None:
            df = compile_s.df + n - self.processes
            half = t_quantile(1 - (1 - CONFIDENCE) / 2, df) * compile_s.sd_log
            compile_s = replace(compile_s, df=df, half_width=half)
        return replace(
            self,
            speedup=self.speedup.with_samples(n),
            eager_ms=self.eager_ms.with_samples(n),
            compiled_ms=self.compiled_ms.with_samples(n),
            compile_s=compile_s,
            compile_per_step=self.compile_per_step.with_samples(
                self.compile_per_step.n + n - self.processes
            )
            if self.compile_per_step is not None
            else None,
        )


def measure(variant: Variant) -> Measured | None:
    """The payoff inputs of a measured variant; None when it has no usable timing."""
    pairs = process_means(variant)
    if not pairs:
        return None
    warm = warm_compile_samples(variant)
    eager_ms = log_estimate([e for e, _ in pairs])
    if len(pairs) > 1:
        speedup = log_estimate([e / c for e, c in pairs])
        estimator = SpeedupEstimator.MEAN_OVER_PROCESSES
    else:
        speedup = _one_process_speedup(variant, pairs[0])
        estimator = SpeedupEstimator.MEAN_ONE_PROCESS
    return Measured(
        speedup=speedup,
        eager_ms=eager_ms,
        compiled_ms=log_estimate([c for _, c in pairs]),
        compile_s=cold_compile_estimate(cold_compile_samples(variant), warm),
        warm_compile_s=_compile_estimate(warm),
        estimator=estimator,
        compile_per_step=_compile_estimate(warm_compile_per_step(variant)),
        # One process starts from the artifacts: its interval borrows the warm compiles'
        # spread, as one cold compile's does (cold_compile_estimate).
        artifacts_compile_s=_artifacts_estimate(artifacts_compile_samples(variant), warm),
    )


def process_means(variant: Variant) -> list[tuple[float, float]]:
    """(mean eager ms, mean compiled ms) of each process of the variant."""
    out = []
    for process in variant_processes(variant):
        eager, compiled = _mean_ms(process, "eager", "eager_b"), _mean_ms(process, "compiled")
        if eager and compiled:
            out.append((eager, compiled))
    return out


def _mean_ms(process: Process, *copies: str) -> float | None:
    """Mean of a process's timed iterations of these copies (ms); None without a positive one."""
    samples = process.samples_ms or {}
    values = [v for copy in copies for v in samples.get(copy) or ()]
    mean = statistics.fmean(values) if values else 0.0
    return mean if mean > 0 else None


def _one_process_speedup(variant: Variant, pair: tuple[float, float]) -> LogEstimate:
    eager, compiled = variant.eager_step_ms, variant.step_ms
    if eager is not None and compiled is not None and eager.rounds and compiled.rounds:
        ratio = ratio_of_means(
            list(eager.samples), list(eager.rounds), list(compiled.samples), list(compiled.rounds)
        )
        half = math.log(ratio.ci_high / ratio.median)
        return LogEstimate(pair[0] / pair[1], half / NORMAL_95, 1, half)
    return LogEstimate(pair[0] / pair[1], 0.0, 1, 0.0)


def cold_compile_samples(variant: Variant) -> list[float]:
    """Wall seconds of every cold compile of the variant. The late recompiles an epoch
    schedule found (late_recompile_s) were measured in the first process and are in its
    sample (its compile_wall_s, so compile_s); the other cold processes did not run the
    epoch end and are charged the same."""
    cost = variant.compile_cost
    samples = [s.wall_s for s in cost.cold_samples] if cost is not None else []
    walls = [w for w in samples if _positive(w)]
    if not walls:
        return [variant.compile_s] if _positive(variant.compile_s) else []
    late = variant.late_recompile_s if _positive(variant.late_recompile_s) else 0.0
    return [walls[0], *(w + late for w in walls[1:])]


def warm_compile_samples(variant: Variant) -> list[float]:
    """Compile wall seconds of the processes that compiled from the warm cache."""
    samples = [p.compile_wall_s for p in variant.processes or () if p.cache == "warm"]
    walls = [w for w in samples if _positive(w)]
    cost = variant.compile_cost
    if not walls and cost is not None and _positive(cost.warm_wall_s):
        walls = [cost.warm_wall_s]
    return walls


def regional_break_even(
    variant: Variant,
    eager: tuple[Sequence[float], Sequence[int]],
    compiled: tuple[Sequence[float], Sequence[int]],
    compile_s: float,
) -> BreakEvenInterval | None:
    """Regional compilation's break-even, with its 95 % interval, from the one process that
    compiled only the repeated blocks: its speedup from its interleaved rounds (as a one-
    process variant's), its one compile with the spread of the variant's warm compiles (as a
    one-cold-compile variant's). None: never (not faster) or nothing to measure."""
    (eager_ms_all, eager_rounds), (compiled_ms_all, compiled_rounds) = eager, compiled
    if not eager_ms_all or not compiled_ms_all or not _positive(compile_s):
        return None
    eager_ms, compiled_ms = statistics.fmean(eager_ms_all), statistics.fmean(compiled_ms_all)
    if eager_ms <= 0 or compiled_ms <= 0:
        return None
    ratio = ratio_of_means(
        list(eager_ms_all), list(eager_rounds), list(compiled_ms_all), list(compiled_rounds)
    )
    half = 0.0
    if ratio.ci_high > 0 and ratio.median > 0:
        half = math.log(ratio.ci_high / ratio.median)
    m = Measured(
        speedup=LogEstimate(eager_ms / compiled_ms, half / NORMAL_95, 1, half),
        eager_ms=log_estimate([eager_ms]),
        compiled_ms=log_estimate([compiled_ms]),
        compile_s=cold_compile_estimate([compile_s], warm_compile_samples(variant)),
        warm_compile_s=None,
        estimator=SpeedupEstimator.MEAN_ONE_PROCESS,
    )
    assert m.compile_s is not None  # one positive sample gives an estimate
    found = break_even(m, m.compile_s)
    return found.interval if found is not None else None


def _artifacts_estimate(loaded: Sequence[float], warm: Sequence[float]) -> LogEstimate | None:
    return cold_compile_estimate(loaded, warm) if loaded else None


def artifacts_compile_samples(variant: Variant) -> list[float]:
    """Compile wall seconds (their loading in them) of the processes that started from the
    first process's cache artifacts."""
    samples = [p.compile_wall_s for p in variant.processes or () if p.cache == "artifacts"]
    return [w for w in samples if _positive(w)]


def warm_compile_per_step(variant: Variant) -> list[float]:
    """Each warm process's compile wall seconds over its own mean eager step (ms)."""
    out = []
    for process in variant_processes(variant):
        eager, wall = _mean_ms(process, "eager", "eager_b"), process.compile_wall_s
        if process.cache == "warm" and eager and _positive(wall):
            out.append(wall / eager)
    return out


def _compile_estimate(samples: Sequence[float]) -> LogEstimate | None:
    return log_estimate(samples) if samples else None


def cold_compile_estimate(cold: Sequence[float], warm: Sequence[float]) -> LogEstimate | None:
    """The cold compile's wall seconds with their 95 % interval. From one cold compile,
    the interval borrows the spread of the warm compiles' wall seconds (the same pipeline,
    timed in processes minutes apart: on a shared machine their spread is mostly the load,
    which moves a cold compile's wall time the same way): t(warm − 1) × their log-sd. A point
    when there are fewer than two warm compiles either."""
    if len(cold) != 1 or len(warm) < 2:
        return _compile_estimate(cold)
    spread = log_estimate(warm).sd_log
    half = t_quantile(1 - (1 - CONFIDENCE) / 2, len(warm) - 1) * spread
    return LogEstimate(cold[0], spread, 1, half, df=len(warm) - 1)


def _positive(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class BreakEven:
    """Steps after which compiling has paid for itself in one run: estimate and 95 %
    interval. `estimate` None: the speedup's estimate is ≤ 1; `high` None: it may never
    pay off."""

    estimate: float | None
    low: float
    high: float | None

    @property
    def interval(self) -> BreakEvenInterval:
        """As the result document records a break-even."""
        return BreakEvenInterval(low=self.low, estimate=self.estimate, high=self.high)


def _gain(speedup: float) -> float:
    """The fraction of an eager step that compiling saves: 1 − 1/speedup."""
    return 1 - 1 / speedup


@dataclass(frozen=True)
class _Variance:
    """Variance components of a log quantity, each with its degrees of freedom (None:
    known exactly enough to take the normal quantile)."""

    parts: tuple[tuple[float, int | None], ...] = ()

    def plus(self, variance: float, df: int | None) -> _Variance:
        return _Variance((*self.parts, (variance, df))) if variance > 0 else self

    @property
    def total(self) -> float:
        return sum(v for v, _ in self.parts)

    def quantile(self) -> float:
        """The two-sided 95 % t quantile at the Welch–Satterthwaite degrees of freedom."""
        finite = [(v, df) for v, df in self.parts if df is not None]
        if not finite:
            return NORMAL_95
        if any(df < 1 for _, df in finite):
            return math.inf  # a spread that could not be measured at all
        df = self.total**2 / sum(v * v / df for v, df in finite)
        return t_quantile(1 - (1 - CONFIDENCE) / 2, max(1, math.floor(df)))

    def half_width(self) -> float:
        return self.quantile() * math.sqrt(self.total)


def _df(estimate: LogEstimate) -> int | None:
    """Degrees of freedom of an estimate's spread; None for a one-process bootstrap."""
    return None if estimate.n < 2 and estimate.df is None else estimate.spread_df


def _compile_variance(m: Measured, compile_s: LogEstimate) -> _Variance:
    """The log of the next run's compile seconds against its step speed: the estimate's own
    uncertainty (over √compiles) plus one new draw. The new draw is the spread of compile
    seconds relative to the same process's eager step time (`compile_per_step`, from the
    warm compiles): what makes the machine slower today makes both the compile and the
    steps slower, and cancels in the break-even; else the compile's own spread."""
    relative = m.compile_per_step
    new = relative if relative is not None and relative.n > 1 else compile_s
    return (
        _Variance()
        .plus(compile_s.sd_log**2 / compile_s.n, _df(compile_s))
        .plus(new.sd_log**2, _df(new))
    )


def _gain_variance(m: Measured) -> _Variance:
    """The log of the next run's saving per step, eager × (1 − 1/speedup): the uncertainty
    of the mean (the paired speedup's gain and the eager step, over √processes) plus one
    new draw of the speedup — one run lands off the mean speedup by as much as one process
    does. The speedup is a ratio timed under one process's conditions, so the machine's
    mood, common to whichever way the user runs, is not in it."""
    s, n = m.speedup.estimate, m.processes
    gain = (m.speedup.sd_log / (s - 1)) ** 2
    return (
        _Variance()
        .plus(gain / n, _df(m.speedup))
        .plus(m.eager_ms.sd_log**2 / n, _df(m.eager_ms))
        .plus(gain, _df(m.speedup))
    )


def _predicted_low(m: Measured, compile_s: LogEstimate) -> float:
    return compile_s.estimate * math.exp(-_compile_variance(m, compile_s).half_width())


def break_even(m: Measured, compile_s: LogEstimate) -> BreakEven | None:
    """The break-even of the next run, with its 95 % prediction interval; None when the
    whole speedup interval is ≤ 1: compiling never pays off."""
    speedup, eager = m.speedup, m.eager_ms.estimate
    if speedup.high <= 1:
        return None
    # No run pays off sooner than the cheapest compile over the largest saving a step may
    # bring: the floor of the interval, where the log-scale one reaches below it (a speedup
    # a hair above 1 widens that one until its low end underflows to 0 steps).
    best_saving_ms = m.eager_ms.high * _gain(speedup.high)
    soonest = _predicted_low(m, compile_s) * 1e3 / best_saving_ms
    if speedup.estimate <= 1:
        return BreakEven(None, soonest, None)
    steps = compile_s.estimate * 1e3 / (eager * _gain(speedup.estimate))
    saving = _gain_variance(m)
    both = _Variance((*saving.parts, *_compile_variance(m, compile_s).parts))
    half = both.half_width()
    low = max(steps * math.exp(-half), min(soonest, steps))
    # The saving itself may reach zero: then no run length is sure to pay off.
    if speedup.low <= 1 or both.quantile() * math.sqrt(saving.total) >= 1:
        return BreakEven(steps, low, None)
    return BreakEven(steps, low, steps * math.exp(half))


def saving_s(m: Measured, compile_s: LogEstimate, steps: int, found: BreakEven | None) -> Interval:
    """Seconds the next `steps`-step run saves by compiling (negative: it loses), with a 95 %
    interval read off the break-even's (`found`): saving = compile × (steps / break-even − 1),
    so its low end is ≥ 0 exactly when the whole break-even interval lies within the run.
    Where the break-even is unbounded, the low end is the slowest speedup's saving less the
    dearest compile."""
    saving_ms = m.eager_ms.estimate * _gain(m.speedup.estimate)
    estimate = steps * saving_ms / 1e3 - compile_s.estimate
    worst = steps * m.eager_ms.estimate * _gain(m.speedup.low) / 1e3 - compile_s.high
    best = steps * m.eager_ms.estimate * _gain(m.speedup.high) / 1e3 - _predicted_low(m, compile_s)
    if found is None or found.estimate is None:
        return Interval(estimate=estimate, low=worst, high=best)
    cost = compile_s.estimate
    low = worst if found.high is None else cost * (steps / found.high - 1)
    high = best if found.low <= 0 else cost * (steps / found.low - 1)
    return Interval(estimate=estimate, low=low, high=high)


def verdict(found: BreakEven | None, steps: int) -> str:
    """ "compile": the whole interval pays off within `steps`; "stay_eager": none of it does;
    else "undecided"."""
    if found is None or found.low > steps:
        return "stay_eager"
    if found.high is not None and found.high <= steps:
        return "compile"
    return "undecided"


def processes_needed(measured: Measured, steps: int) -> int | None:
    """How many more processes of the variant, with the spread seen so far, would make the
    interval decide (all of it within `steps` or none of it); None when no number up to
    MAX_PROCESSES would: the estimate sits on the run length, or what keeps the interval
    open is what more processes cannot shrink — the compile cost's noise, or how far one
    run's step times land from the mean."""
    if measured.compile_s is None or (
        measured.speedup.sd_log == 0 and measured.eager_ms.sd_log == 0
    ):
        return None
    for total in range(measured.processes + 1, MAX_PROCESSES + 1):
        more = measured.with_processes(total)
        assert more.compile_s is not None
        found = break_even(more, more.compile_s)
        if verdict(found, steps) != "undecided":
            return total - measured.processes
    return None
