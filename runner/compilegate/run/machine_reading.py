"""The machine's hardware class as compilegate reads it itself, never as the measuring
interpreter reports it.

The probe (child/environment.py) runs in the measuring interpreter: the pull request's venv or
image, whose packages, `.pth` files and `sitecustomize` run before it. What it reports of the
machine is the pull request's word. The hardware class in it (results/machine.py) picks the
stored baseline a result is judged against (gate/class_baselines.py) and what a comparison
judges (gate/hardware_reach.py). A probe that named another CPU model had its speed, compile
seconds and memory judged against another class's baseline, which judges none of them. So the
class's fields are read here, in compilegate's own process, on the machine the children run
on (a container shares the host's CPUs and the GPUs it is given):

    device      cuda when NVML (nvidia-ml-py) sees a GPU the children are given, else cpu
    gpu_name    NVML's name of the first of them (the name torch reports: cudaDeviceProp)
    gpu_count   how many of NVML's GPUs the launcher gives the children (Launcher.visible_gpus:
                CUDA_VISIBLE_DEVICES, a container's --gpus)
    cpu_model   /proc/cpuinfo's model name, read as the probe reads it
    cpu_count   os.cpu_count(), as the probe counts (not the affinity: the same in a container)

The probe's values are replaced by these; the fields where it said otherwise are recorded
(`environment.probe_overruled`, names only: nothing the pull request wrote is kept)."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLASS_FIELDS = ("device", "gpu_name", "gpu_count", "cpu_model", "cpu_count")
CPUINFO_LIMIT_BYTES = 4 << 20  # a 1,024-core machine's /proc/cpuinfo is about 1.5 MiB


@dataclass(frozen=True)
class MachineReading:
    """The hardware class's fields as this process read them (results/machine.py's
    HardwareClass, with the device type and counts the children see)."""

    device: str
    gpu_name: str | None
    gpu_count: int
    cpu_model: str | None
    cpu_count: int | None

    def overruled(self, probe: Mapping[str, Any]) -> tuple[str, ...]:
        """The class fields the probe reported otherwise (on a CPU machine the probe's
        gpu_name is None and its gpu_count 0, as this reading's)."""
        return tuple(name for name in CLASS_FIELDS if probe.get(name) != getattr(self, name))

    def applied(self, probe: Mapping[str, Any]) -> dict[str, Any]:
        """The probe's environment with this reading in its class fields and the names of the
        fields it said otherwise (`probe_overruled`, left out where none)."""
        out = dict(probe)
        overruled = self.overruled(probe)
        out.update({name: getattr(self, name) for name in CLASS_FIELDS})
        if overruled:
            out["probe_overruled"] = list(overruled)
        return out


def read_machine(
    visible_gpus: Callable[[int], tuple[int, ...]],
    *,
    cpuinfo: Path = Path("/proc/cpuinfo"),
    gpus: Callable[[], tuple[str, ...]] | None = None,
) -> MachineReading:
    """This machine's class fields. `visible_gpus(total)`: the indices of NVML's `total` GPUs
    the children are given (Launcher.visible_gpus); `gpus`: NVML's GPU names by index
    (nvml_gpus)."""
    names = (gpus or nvml_gpus)()
    given = [i for i in visible_gpus(len(names)) if 0 <= i < len(names)]
    cpu = cpu_model(cpuinfo)
    if not given:
        return MachineReading("cpu", None, 0, cpu, os.cpu_count())
    return MachineReading("cuda", names[given[0]], len(given), cpu, os.cpu_count())


def reading_for(launcher: Any) -> MachineReading:
    """The machine as the children of `launcher` (run/launcher.py's Launcher) have it."""
    return read_machine(lambda total: gpus_given(launcher, total))


def nvml_gpus() -> tuple[str, ...]:
    """The names of the GPUs NVML lists, in its order (CUDA's too under
    CUDA_DEVICE_ORDER=PCI_BUS_ID, and for one GPU always); none where NVML cannot start (no
    driver: a CPU machine)."""
    try:
        import pynvml
    except ImportError:
        return ()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return ()
    try:
        count = pynvml.nvmlDeviceGetCount()
        names = []
        for index in range(count):
            name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index))
            names.append(name.decode() if isinstance(name, bytes) else str(name))
        return tuple(names)
    except pynvml.NVMLError:
        return ()
    finally:
        pynvml.nvmlShutdown()


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name as child/environment.cpu_model reads it (tests/unit/
    test_machine_reading.py holds the two to one answer): the first `model name`, `Model` or
    `cpu model` line, else platform.processor()."""
    try:
        with cpuinfo.open("rb") as handle:
            text = handle.read(CPUINFO_LIMIT_BYTES).decode("utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or None


def gpus_given(launcher: Any, total: int) -> tuple[int, ...]:
    """The indices of NVML's `total` GPUs a launcher's children are given: its own
    `visible_gpus` where it has one (a container's --gpus: containers/child_launcher.py), else
    what CUDA_VISIBLE_DEVICES in the environment it hands them leaves (ChildLauncher: the
    variable is on the children's allow-list, run/child_env.py)."""
    own = getattr(launcher, "visible_gpus", None)
    if callable(own):
        return tuple(own(total))
    return cuda_visible(launcher.host_env, total)


def cuda_visible(host_env: Mapping[str, str], total: int) -> tuple[int, ...]:
    """The indices of `total` GPUs a process given `host_env` sees (CUDA_VISIBLE_DEVICES):
    all when unset; else its entries up to the first CUDA stops at (not an index of one of
    them: an invalid one hides the rest). A GPU's UUID (GPU-…, MIG-…) counts as one GPU whose
    index is not known here: the first is taken for the name."""
    text = host_env.get("CUDA_VISIBLE_DEVICES")
    if text is None:
        return tuple(range(total))
    seen: list[int] = []
    for entry in text.split(","):
        entry = entry.strip()
        if entry.isdigit() and int(entry) < total and int(entry) not in seen:
            seen.append(int(entry))
        elif entry.startswith(("GPU-", "MIG-")) and len(seen) < total:
            seen.append(0)
        else:
            break
    return tuple(seen)
