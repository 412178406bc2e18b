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
    break-even       compile cost / d steps; its interval adds the log half-widths of the
                     compile cost, the speedup's (1 − 1/speedup) and the eager step in
                     quadrature (delta method); unbounded above when the speedup's interval
                     reaches 1 (it may never pay off)
    saving over S    S·d − C, low S·d_low − C_high, high S·d_high − C_low (seconds)

The warm-cache break-even does the same with the compile seconds of the later processes,
which compile from the cache the first one filled: what a second run of the same job pays.
Deterministic for the same document (the one-process bootstrap has a fixed seed).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .processes import variant_records
from .stats import CONFIDENCE, ratio_of_means, t_quantile

Doc = Mapping[str, Any]
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

    @property
    def low(self) -> float:
        return self.estimate * math.exp(-self.half_width)

    @property
    def high(self) -> float:
        return self.estimate * math.exp(self.half_width)

    def with_samples(self, n: int) -> LogEstimate:
        """The same estimate and spread as if `n` samples had been taken."""
        return replace(self, n=n, half_width=_t_half_width(self.sd_log, n))

    def to_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


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
    compile_s: LogEstimate | None
    warm_compile_s: LogEstimate | None
    estimator: str

    @property
    def processes(self) -> int:
        return self.speedup.n


def measure(variant: Doc) -> Measured | None:
    """The payoff inputs of a measured variant; None when it has no usable timing."""
    pairs = process_means(variant)
    if not pairs:
        return None
    warm = warm_compile_samples(variant)
    eager_ms = log_estimate([e for e, _ in pairs])
    if len(pairs) > 1:
        speedup = log_estimate([e / c for e, c in pairs])
        estimator = (
            f"mean step time (outliers included), eager/compiled per process, geometric mean "
            f"over {len(pairs)} processes, 95 % t interval"
        )
    else:
        speedup = _one_process_speedup(variant, pairs[0])
        estimator = "mean step time (outliers included), eager/compiled, one process, 95 % CI"
    return Measured(
        speedup=speedup,
        eager_ms=eager_ms,
        compile_s=cold_compile_estimate(cold_compile_samples(variant), warm),
        warm_compile_s=_compile_estimate(warm),
        estimator=estimator,
    )


def process_means(variant: Doc) -> list[tuple[float, float]]:
    """(mean eager ms, mean compiled ms) of each process of the variant."""
    out = []
    for record in variant_records(variant):
        samples = record.get("samples_ms") or {}
        eager = [*(samples.get("eager") or []), *(samples.get("eager_b") or [])]
        compiled = samples.get("compiled") or []
        if eager and compiled:
            out.append((statistics.fmean(eager), statistics.fmean(compiled)))
    return [(e, c) for e, c in out if e > 0 and c > 0]


def _one_process_speedup(variant: Doc, pair: tuple[float, float]) -> LogEstimate:
    eager, compiled = variant.get("eager_step_ms") or {}, variant.get("step_ms") or {}
    if eager.get("rounds") and compiled.get("rounds"):
        ratio = ratio_of_means(
            eager["samples"], eager["rounds"], compiled["samples"], compiled["rounds"]
        )
        half = math.log(ratio.ci_high / ratio.median)
        return LogEstimate(pair[0] / pair[1], half / NORMAL_95, 1, half)
    return LogEstimate(pair[0] / pair[1], 0.0, 1, 0.0)


def cold_compile_samples(variant: Doc) -> list[float]:
    """Wall seconds of every cold compile of the variant. The late recompiles an epoch
    schedule found (late_recompile_s) were measured in the first process and are in its
    sample (its compile_wall_s, so compile_s); the other cold processes did not run the
    epoch end and are charged the same."""
    cost = variant.get("compile_cost") or {}
    walls = [s.get("wall_s") for s in cost.get("cold_samples") or [] if isinstance(s, Mapping)]
    walls = [w for w in walls if _positive(w)]
    if not walls:
        return [variant["compile_s"]] if _positive(variant.get("compile_s")) else []
    late = variant.get("late_recompile_s")
    late = late if _positive(late) else 0.0
    return [walls[0], *(w + late for w in walls[1:])]


def warm_compile_samples(variant: Doc) -> list[float]:
    """Compile wall seconds of the processes that compiled from the warm cache."""
    walls = [
        r.get("compile_wall_s")
        for r in variant.get("processes") or []
        if isinstance(r, Mapping) and r.get("cache") == "warm"
    ]
    walls = [w for w in walls if _positive(w)]
    if not walls and _positive((variant.get("compile_cost") or {}).get("warm_wall_s")):
        walls = [variant["compile_cost"]["warm_wall_s"]]
    return walls


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
    return LogEstimate(cold[0], spread, 1, half)


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class BreakEven:
    """Steps after which compiling has paid for itself: estimate and 95 % interval.
    `estimate` None: the speedup's estimate is ≤ 1; `high` None: it may never pay off."""

    estimate: float | None
    low: float
    high: float | None

    def to_dict(self) -> dict[str, float | None]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def _gain(speedup: float) -> float:
    """The fraction of an eager step that compiling saves: 1 − 1/speedup."""
    return 1 - 1 / speedup


def break_even(
    speedup: LogEstimate, eager_ms: LogEstimate, compile_s: LogEstimate
) -> BreakEven | None:
    """None when the whole speedup interval is ≤ 1: compiling never pays off."""
    if speedup.high <= 1:
        return None
    if speedup.estimate <= 1:
        best_saving_ms = eager_ms.high * _gain(speedup.high)
        return BreakEven(None, compile_s.low * 1e3 / best_saving_ms, None)
    saving_ms = eager_ms.estimate * _gain(speedup.estimate)
    steps = compile_s.estimate * 1e3 / saving_ms
    up = math.log(_gain(speedup.high) / _gain(speedup.estimate))
    low = steps * math.exp(-math.hypot(up, eager_ms.half_width, compile_s.half_width))
    if speedup.low <= 1:
        return BreakEven(steps, low, None)
    down = math.log(_gain(speedup.estimate) / _gain(speedup.low))
    high = steps * math.exp(math.hypot(down, eager_ms.half_width, compile_s.half_width))
    return BreakEven(steps, low, high)


def saving_s(
    speedup: LogEstimate, eager_ms: LogEstimate, compile_s: LogEstimate, steps: int
) -> dict[str, float]:
    """Seconds a `steps`-step run saves by compiling (negative: it loses), 95 % interval."""
    saving_ms = eager_ms.estimate * _gain(speedup.estimate)
    if speedup.estimate > 1:
        up = math.hypot(
            math.log(_gain(speedup.high) / _gain(speedup.estimate)), eager_ms.half_width
        )
        best_ms = saving_ms * math.exp(up)
        if speedup.low > 1:
            down = math.log(_gain(speedup.estimate) / _gain(speedup.low))
            worst_ms = saving_ms * math.exp(-math.hypot(down, eager_ms.half_width))
        else:
            worst_ms = eager_ms.estimate * _gain(speedup.low)
    else:
        best_ms = eager_ms.estimate * _gain(speedup.high)
        worst_ms = eager_ms.estimate * _gain(speedup.low)
    return {
        "estimate": steps * saving_ms / 1e3 - compile_s.estimate,
        "low": steps * worst_ms / 1e3 - compile_s.high,
        "high": steps * best_ms / 1e3 - compile_s.low,
    }


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
    MAX_PROCESSES would (the estimate sits on the run length, or the compile cost's own
    noise is what keeps it open)."""
    if measured.compile_s is None or (
        measured.speedup.sd_log == 0 and measured.eager_ms.sd_log == 0
    ):
        return None
    for total in range(measured.processes + 1, MAX_PROCESSES + 1):
        found = break_even(
            measured.speedup.with_samples(total),
            measured.eager_ms.with_samples(total),
            measured.compile_s,
        )
        if verdict(found, steps) != "undecided":
            return total - measured.processes
    return None
