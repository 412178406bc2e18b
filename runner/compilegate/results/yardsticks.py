"""Which yardstick a step time is divided by: the one its processes follow.

Every child times two yardsticks beside the step (child/timing.py): a GPU-bound one
(matmuls, element-wise ops) and a launch-bound one (a chain of tiny kernels: the host's
dispatch speed). Dividing a step time by a yardstick cancels a drift between processes only
when both move together. A launch-bound CUDA step follows the host (on the H200 the seed's
step wandered 11.4–17.8 ms in 45 s, the SM clock fixed) and not the matmuls; a GPU-bound
step follows the GPU. On a CPU both yardsticks are host-bound.

The pick: the yardstick whose ratio to the step spreads least across the processes of each
run (the pooled standard deviation of log(step / yardstick) around each run's own mean, so
that a real change between runs does not count). The GPU-bound one on a tie, where a
process did not time the launch-bound one (documents before it), or with fewer than one
degree of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .model import Process
from .processes import GPU_BOUND, LAUNCH_BOUND, all_timed_yardstick

ValuesOf = Callable[..., list[float]]  # processes.eager_values or compiled_values


@dataclass(frozen=True)
class Choice:
    """The yardstick picked, and each candidate's spread (percent, None: not timed by
    every process)."""

    yardstick: str
    spreads_pct: dict[str, float | None]

    def timed_spreads(self) -> tuple[tuple[str, float], ...]:
        """(yardstick, spread) of each candidate every process timed (the row's words say
        which was picked, and why, from these: report/row_words/speed.py)."""
        return tuple((k, v) for k, v in self.spreads_pct.items() if v is not None)


def pooled_log_spread(runs: Sequence[Sequence[float]]) -> float | None:
    """The pooled standard deviation of the logs of `runs`' values around each run's own
    mean, as a percent; None without a degree of freedom."""
    squares, freedom = 0.0, 0
    for values in runs:
        logs = [math.log(v) for v in values if v > 0]
        if len(logs) < 2:
            continue
        mean = math.fsum(logs) / len(logs)
        squares += math.fsum((x - mean) ** 2 for x in logs)
        freedom += len(logs) - 1
    if freedom == 0:
        return None
    return (math.exp(math.sqrt(squares / freedom)) - 1) * 100


def tracking_yardstick(runs: Sequence[Sequence[Process]], values_of: ValuesOf) -> Choice:
    """The yardstick the step's processes follow in these runs (the module's docstring);
    `values_of(records, per_yardstick=True, yardstick=name)` gives the step in its units."""
    spreads: dict[str, float | None] = {}
    for name in (GPU_BOUND, LAUNCH_BOUND):
        if all(all_timed_yardstick(records, name) for records in runs):
            spreads[name] = pooled_log_spread(
                [values_of(records, per_yardstick=True, yardstick=name) for records in runs]
            )
        else:
            spreads[name] = None
    gpu, launch = spreads[GPU_BOUND], spreads[LAUNCH_BOUND]
    if gpu is not None and launch is not None and launch < gpu:
        return Choice(LAUNCH_BOUND, spreads)
    return Choice(GPU_BOUND, spreads)
