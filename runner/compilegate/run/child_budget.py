"""A measuring child's limit: its own CPU seconds, and a generous wall cap.

`timeout_s` (config) bounds the CPU seconds a child and every process it starts (compile
workers, the C++ compiler) use, not the wall-clock seconds it takes: on a busy machine a
child waits for a core, and a wall-clock limit then measures the machine, not the step. On a
2-core runner with two busy loops and other jobs (load average 1.7-9.5), `make demo` lost two
of its four variants to a 600 s wall-clock limit while their children had used far less than
600 CPU seconds (bench/child_budget.py measures both rules under that load).

A child that waits without using CPU (a hang, a deadlock, a sleep) is stopped by the wall
cap: WALL_CAP_FACTOR x timeout_s of wall-clock time, generous so that only a child that
makes no progress meets it. Where the CPU time of the process group cannot be read (no
/proc: not Linux), timeout_s is the wall-clock limit, as it was before.

The host launcher (run/launcher.py) reads the child's process group from /proc, with the
exited orphans it adopted as a child subreaper (run/descendant_cpu.py); the container
launcher (containers/child_launcher.py) reads the container's CPU usage from the engine.
Both say which limit was passed as a value (`BudgetPassed`, in run/child_failure.py's
causes); report/child_failure_words.py says it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .descendant_cpu import group_members

WALL_CAP_FACTOR = 4.0  # the wall cap, in multiples of timeout_s (CPU seconds)
POLL_S = 1.0  # how often the child's CPU time is read
PROC = Path("/proc")


@dataclass(frozen=True)
class ChildBudget:
    """One child's limits: `cpu_s` CPU seconds of its process group, `wall_s` wall-clock
    seconds (the cap; the only limit when the CPU time cannot be read)."""

    cpu_s: float
    wall_s: float

    @classmethod
    def of(cls, timeout_s: float, wall_cap_s: float | None = None) -> ChildBudget:
        """`timeout_s` CPU seconds under the usual wall cap, or under `wall_cap_s` when it
        is lower (matrix --timeout-s: what is left of the whole run)."""
        wall_s = WALL_CAP_FACTOR * timeout_s
        return cls(
            cpu_s=timeout_s, wall_s=wall_s if wall_cap_s is None else min(wall_s, wall_cap_s)
        )


@dataclass(frozen=True)
class BudgetPassed:
    """Which limit a child passed: `cpu` (its CPU seconds), `wall` (the cap) or
    `wall-only` (no CPU time readable: timeout_s was a wall-clock limit)."""

    limit: str
    budget: ChildBudget
    cpu_used_s: float | None
    wall_used_s: float


def wait_within(
    wait: Callable[[float], bool],
    cpu_used_s: Callable[[], float | None],
    budget: ChildBudget,
    *,
    poll_s: float = POLL_S,
    clock: Callable[[], float] = time.monotonic,
) -> BudgetPassed | None:
    """Wait for a child until it ends (None) or passes a limit (which one). `wait(seconds)`
    waits at most that long and says whether the child ended; `cpu_used_s()` is the CPU
    seconds of the child and its descendants so far, or None where they cannot be read."""
    started = clock()
    cpu_known = True
    cpu = 0.0
    while True:
        elapsed = clock() - started
        wall_limit = budget.wall_s if cpu_known else budget.cpu_s
        left = wall_limit - elapsed
        if left <= 0:
            if not cpu_known:
                return BudgetPassed("wall-only", budget, None, elapsed)
            return BudgetPassed("wall", budget, cpu, elapsed)
        if wait(min(poll_s, left)):
            return None
        read = cpu_used_s()
        if read is None:
            if cpu_known and clock() - started >= budget.cpu_s:
                return BudgetPassed("wall-only", budget, None, clock() - started)
            cpu_known = False
            continue
        cpu = max(cpu, read)  # a process leaving the group takes its seconds with it
        if cpu >= budget.cpu_s:
            return BudgetPassed("cpu", budget, cpu, clock() - started)


def group_cpu_s(pgid: int, proc: Path = PROC) -> float | None:
    """CPU seconds (user + system) of every process in process group `pgid`, with the
    children each has waited for (cutime, cstime): the child, its compile workers and the
    compilers they ran. None where /proc cannot be read. Exited orphans are not in it:
    run/descendant_cpu.DescendantCpu adds them."""
    members = group_members(pgid, proc)
    if members is None:
        return None
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    return sum(member.jiffies for member in members) / tick
