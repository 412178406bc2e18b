"""The GPU's state while a run measured, sampled on the host through NVML (nvidia-ml-py).

A GPU step time moves with the SM clock, with throttling (power cap, thermal, hardware
slowdown) and with other processes on the same GPU; the run's own numbers cannot tell
those from the code. So, where NVML answers, the run samples device 0 once a second while
its children measure: the SM and memory clocks while the GPU was busy (an idle GPU drops
its clocks between children, which says nothing of the measurement), the throttle reasons
seen while busy, the compute processes that are not this run's own, and once the driver,
persistence mode and power limit. `GpuSampler.summary()` is recorded in the result
(`run_health.gpu`); results/run_health.py decides what is unsteady.

Without nvidia-ml-py, without a driver, or on a host without a GPU, the summary is None.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..results.model import GpuHealth

SAMPLE_EVERY_S = 1.0
# NVML's clocks-event (throttle) reasons that mean the clock was held down under load;
# GPU idle (0x1), an application clock setting (0x2), sync boost (0x10) and the display
# clock (0x100) are not.
THROTTLES = {
    0x4: "software power cap",
    0x8: "hardware slowdown",
    0x20: "software thermal slowdown",
    0x40: "hardware thermal slowdown",
    0x80: "power brake",
}


@dataclass(frozen=True)
class GpuSample:
    """One look at the GPU: utilisation (percent), clocks (MHz), throttle reasons
    (NVML's bitmask), the compute processes' pids."""

    busy_pct: int
    sm_mhz: int
    mem_mhz: int
    throttle_reasons: int
    pids: tuple[int, ...]


class Nvml:
    """Device 0 through pynvml; `open()` is None where NVML cannot be had."""

    def __init__(self, pynvml: Any, handle: Any) -> None:
        self.pynvml = pynvml
        self.handle = handle

    @classmethod
    def open(cls) -> Nvml | None:
        try:
            import pynvml
        except ImportError:
            return None
        try:
            pynvml.nvmlInit()
            return cls(pynvml, pynvml.nvmlDeviceGetHandleByIndex(0))
        except Exception:  # NVMLError and its kin: no driver, no device
            return None

    def facts(self) -> dict[str, Any]:
        nvml, handle = self.pynvml, self.handle
        return {
            "name": _text(nvml.nvmlDeviceGetName(handle)),
            "driver": _text(nvml.nvmlSystemGetDriverVersion()),
            "persistence_mode": bool(nvml.nvmlDeviceGetPersistenceMode(handle)),
            "power_limit_w": nvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000,
        }

    def sample(self) -> GpuSample:
        nvml, handle = self.pynvml, self.handle
        return GpuSample(
            busy_pct=nvml.nvmlDeviceGetUtilizationRates(handle).gpu,
            sm_mhz=nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM),
            mem_mhz=nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_MEM),
            throttle_reasons=nvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle),
            pids=tuple(p.pid for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle)),
        )

    def close(self) -> None:
        try:
            self.pynvml.nvmlShutdown()
        except Exception:
            pass


def own_pids(root: int | None = None, proc: str = "/proc") -> set[int]:
    """This process and its descendants (their pids as the host sees them)."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    try:
        entries = os.listdir(proc)
    except OSError:
        return {root}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/stat", encoding="ascii", errors="replace") as stat:
                # pid (comm) state ppid …: comm may hold spaces and parentheses
                after = stat.read().rsplit(")", 1)[1].split()
            parents[int(entry)] = int(after[1])
        except (OSError, IndexError, ValueError):
            continue
    ours = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in ours and pid not in ours:
                ours.add(pid)
                grew = True
    return ours


@dataclass
class GpuSampler:
    """`start()`, the run, `stop()`, then `summary()` (None without NVML). With
    `children_local` False (children in containers, not this process's descendants) the
    other processes on the GPU are not told apart from the run's own: not counted."""

    children_local: bool = True
    open_nvml: Callable[[], Any] = Nvml.open
    read_own_pids: Callable[[], set[int]] = own_pids
    _nvml: Any = None
    _facts: dict[str, Any] = field(default_factory=dict)
    _samples: list[GpuSample] = field(default_factory=list)
    _others: set[int] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> GpuSampler:
        self._nvml = self.open_nvml()
        if self._nvml is None:
            return self
        try:
            self._facts = self._nvml.facts()
        except Exception:
            self._nvml.close()
            self._nvml = None
            return self
        self._sample()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="gpu-state")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._nvml is not None:
            self._nvml.close()

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self._sample()

    def _sample(self) -> None:
        try:
            sample = self._nvml.sample()
        except Exception:
            return
        self._samples.append(sample)
        if self.children_local and sample.pids:
            ours = self.read_own_pids()
            self._others.update(pid for pid in sample.pids if pid not in ours)

    def summary(self) -> GpuHealth | None:
        if not self._facts:
            return None
        busy = [s for s in self._samples if s.busy_pct > 0]
        reasons = 0
        for sample in busy:
            reasons |= sample.throttle_reasons
        facts = self._facts
        return GpuHealth(
            name=facts.get("name"),
            driver=facts.get("driver"),
            persistence_mode=facts.get("persistence_mode"),
            power_limit_w=facts.get("power_limit_w"),
            samples=len(self._samples),
            busy_samples=len(busy),
            sm_mhz_min=min((s.sm_mhz for s in busy), default=None),
            sm_mhz_max=max((s.sm_mhz for s in busy), default=None),
            mem_mhz_min=min((s.mem_mhz for s in busy), default=None),
            mem_mhz_max=max((s.mem_mhz for s in busy), default=None),
            throttled=tuple(name for bit, name in THROTTLES.items() if reasons & bit),
            other_processes=len(self._others) if self.children_local else None,
        )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
