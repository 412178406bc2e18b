"""How busy the machine was while a run measured: sampled on the host, beside the children.

A step time, a compile time and every noise estimate move with what else the machine runs,
and on a shared runner that changes from minute to minute. So the run samples, once a
second, the load average and the kernel's CPU counters (/proc/stat: busy and steal
jiffies), and at the end says how much of the machine's CPU *other* processes took: the
machine's busy CPU seconds less this run's own (its process and every child it waited for,
getrusage). Children that run in a container are not this process's children, so there
the share of others is not known (None) and the load average speaks alone.

`MachineLoad.summary()` is recorded in the result (`run_health.machine`); what it means for
the run's verdicts is results/run_health.py's business.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..results.model import MachineHealth

SAMPLE_EVERY_S = 1.0
PROC_STAT = "/proc/stat"


@dataclass(frozen=True)
class CpuCounters:
    """The kernel's CPU counters (all CPUs), in seconds."""

    busy_s: float
    steal_s: float
    total_s: float

    @classmethod
    def read(cls, path: str = PROC_STAT) -> CpuCounters | None:
        try:
            with open(path, encoding="ascii") as stat:
                fields = stat.readline().split()
        except OSError:
            return None
        if not fields or fields[0] != "cpu" or len(fields) < 5:
            return None
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        jiffies = [int(x) for x in fields[1:9]]
        jiffies += [0] * (8 - len(jiffies))
        user, nice, system, idle, iowait, irq, softirq, steal = jiffies[:8]
        busy = user + nice + system + irq + softirq
        total = busy + idle + iowait + steal
        return cls(busy_s=busy / tick, steal_s=steal / tick, total_s=total / tick)


def own_cpu_s() -> float:
    """CPU seconds of this process and of every child it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class MachineLoad:
    """A sampler: `start()`, the run, `stop()`, then `summary()`. `children_local` says
    whether the run's children are this process's own (venv/host) or a container's."""

    children_local: bool = True
    clock: Callable[[], float] = time.monotonic
    read_counters: Callable[[], CpuCounters | None] = CpuCounters.read
    read_load: Callable[[], float] = lambda: os.getloadavg()[0]
    read_own_cpu: Callable[[], float] = own_cpu_s
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)
    _loads: list[float] = field(default_factory=list)
    _start: tuple[float, CpuCounters | None, float] | None = None
    _end: tuple[float, CpuCounters | None, float] | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> MachineLoad:
        self._start = (self.clock(), self.read_counters(), self.read_own_cpu())
        self._sample()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="machine-load")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()
        self._end = (self.clock(), self.read_counters(), self.read_own_cpu())

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self._sample()

    def _sample(self) -> None:
        try:
            self._loads.append(float(self.read_load()))
        except OSError:
            pass

    def summary(self) -> MachineHealth:
        """What the run saw: seconds, cores, load average (mean, max), the share of the
        machine's CPU that others used and that the hypervisor stole, in percent."""
        loads = MachineHealth(
            cpu_count=self.cpu_count,
            load_average_mean=sum(self._loads) / len(self._loads) if self._loads else None,
            load_average_max=max(self._loads) if self._loads else None,
        )
        if self._start is None or self._end is None:
            return loads
        (t0, c0, own0), (t1, c1, own1) = self._start, self._end
        timed = replace(loads, seconds=t1 - t0)
        if c0 is None or c1 is None or c1.total_s <= c0.total_s:
            return timed
        total = c1.total_s - c0.total_s
        others = (c1.busy_s - c0.busy_s) - (own1 - own0)
        return replace(
            timed,
            steal_pct=max(0.0, (c1.steal_s - c0.steal_s) / total * 100),
            others_cpu_pct=min(100.0, max(0.0, others / total * 100))
            if self.children_local
            else None,
        )
