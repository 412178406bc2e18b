"""The default branch's recent runs, kept in the baseline, and the between-run noise they show.

A stored baseline is one run, measured on one day under that day's load. Its processes'
spread says how far one *process* lands from another within that run; it says nothing of
how far a whole run lands from another on another day (another neighbour on the runner,
another thermal state). On a shared runner that between-run shift is the larger part: a
same-commit rerun landed +52 % off in yardstick units. So `compilegate baseline update`
keeps, per step, a summary of each of the default branch's last runs (`history`, newest
last, at most `HISTORY_RUNS`), and the gate judges the speed rows against their mean with a
95 % prediction interval for one more run:

    half-width (log scale) = t(0.975, n − 1) · s · √(1 + 1/n)

where s is the spread of the n runs' values (each the geometric mean over a run's processes
of their fastest iteration — the statistic the gate compares). Bencher moved to the same
(a prediction interval over the branch's recent history). The spread of those runs holds
every source of noise a new run meets — its processes' luck and the day's load — so an
unchanged commit under another day's load lands inside it. That interval is the row's
noise: the runs' spread already holds how far one run's processes scatter. Taking the
wider of it and this run's two-sample interval against the latest baseline run (as the
gate did first) made every run on a busy machine too noisy to decide: in
bench/gate_power.py, busy loops coming and going every 20 s on the 2-core runner, a 5-run
history, a 10 % eager slowdown was caught in 0/5 runs that way (5/5 inconclusive) and in
5/5 on the prediction alone. Fewer than `MIN_HISTORY_RUNS` runs: no prediction, the
two-sample interval alone.

A history restarts when the step's configuration changes (`config_fingerprint`): runs of
another configuration measure something else. A run recorded from an unsteady machine
(`unsteady_times`: gate/baseline.py) does not join it: its times are the outlier the
history's spread would carry into every later verdict.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from ..results.model import HistoryRun, Step
from ..results.processes import run_summary
from ..results.stats import t_quantile

HISTORY_RUNS = 10
# t(0.975, 4) = 2.78. From 3 runs (t(2) = 4.30) the interval was so wide that 5 of 8 A/A
# runs under intermittent load read inconclusive, where the two-sample interval against
# the latest run alone said 1 of 8 (bench/gate_power.py --baseline-runs 3, judged again).
MIN_HISTORY_RUNS = 5


@dataclass(frozen=True)
class Prediction:
    """Where one more run of the default branch is expected to land: the runs' geometric
    mean and the 95 % prediction half-width around it, in percent."""

    mean: float
    noise_pct: float
    runs: int
    spread_pct: float  # the runs' own standard deviation, log scale, in percent

    def change_pct(self, value: float) -> float:
        return (value / self.mean - 1) * 100


def merged_history(
    old_step: Step | None, new_step: Step, created_at: str | None, keep_runs: int = HISTORY_RUNS
) -> tuple[HistoryRun, ...]:
    """The history a baseline step carries after `new_step` is merged in: the old step's
    runs (its history, or the old step itself for a baseline written before histories),
    then the new run, the last `keep_runs`; restarted when the configuration changed. A run
    whose times are not vouched for (`unsteady_times`), new or old, is left out."""
    summary = None if new_step.unsteady_times else run_summary(new_step)
    runs: list[HistoryRun] = []
    if old_step is not None:
        runs = list(old_step.history or ())
        if not runs and not old_step.unsteady_times:
            first = run_summary(old_step)
            runs = [first] if first else []
    if summary is None:
        if new_step.unsteady_times and not new_step.failed:
            runs = [r for r in runs if r.config_fingerprint == new_step.config_fingerprint]
        return tuple(runs[-keep_runs:])
    runs = [r for r in runs if r.config_fingerprint == summary.config_fingerprint]
    return tuple([*runs, dataclasses.replace(summary, created_at=created_at)][-keep_runs:])


def history_values(step: Step, variant: str | None, key: str) -> list[float]:
    """`key` (e.g. `eager_step_yardsticks`, `speedup`) of each run the step's history
    keeps, oldest first; runs that did not record it are left out."""
    values = []
    for run in step.history or ():
        if variant in (None, "eager"):
            value = getattr(run, key, None)
        else:
            holder = (run.variants or {}).get(variant)
            value = holder.get(key) if isinstance(holder, Mapping) else None
        if _positive(value):
            values.append(float(value))
    return values


def _positive(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def predict(values: Sequence[float]) -> Prediction | None:
    """The 95 % prediction interval for one more run; None with fewer than
    MIN_HISTORY_RUNS runs."""
    n = len(values)
    if n < MIN_HISTORY_RUNS:
        return None
    logs = [math.log(v) for v in values]
    spread = statistics.stdev(logs)
    half = t_quantile(0.975, n - 1) * spread * math.sqrt(1 + 1 / n)
    return Prediction(
        mean=math.exp(statistics.fmean(logs)),
        noise_pct=(math.exp(half) - 1) * 100,
        runs=n,
        spread_pct=(math.exp(spread) - 1) * 100,
    )
