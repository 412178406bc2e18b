"""The machine a result was measured on: its fingerprint, and the hardware class in it.

A runner pool's nodes differ (GPU SKU, driver, host CPU), so a stored baseline is kept per
hardware class (gate/class_baselines.py) and a result is judged in full only against a
baseline of its own class (gate/compare.py). Both are read once from a parsed document's
`environment` (what child/environment.py recorded):

    MachineFingerprint   everything recorded about the machine: device type, GPU SKU and
                         count, NVIDIA driver and CUDA, CPU model and logical cores
    HardwareClass        the part of it that moves timings, memory and compile seconds:
                         - CUDA: the GPU SKU (`gpu_name`) and how many GPUs the run saw
                           (`gpu_count`: a distributed step's world size picks the node);
                         - CPU: the CPU model and its logical cores — a CPU step's threads
                           are its cores, so a 2-core and a 16-core runner of one model
                           time the same step differently.
                         The rest of the fingerprint is a note (gate/policy.environment_notes),
                         not a class: a driver or CUDA update is compared, like a torch upgrade
                         (that is the upgrade question), and a GPU step's host CPU is stated.

A count a side does not record (older documents) does not tell classes apart; a CPU model a
CPU run does not record does (`cpu_model_recorded`): it cannot be matched at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Environment, ResultDocument

CUDA = "cuda"
CPU = "cpu"


@dataclass(frozen=True)
class HardwareClass:
    """What a baseline is kept per, and what a full comparison needs equal. Fields that do not
    apply to the device type are None (a CPU class has no GPU)."""

    device: str | None
    gpu_name: str | None = None
    gpu_count: int | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None

    @property
    def key(self) -> str:
        """A file-name-safe name of the class, stable across runs: `cuda-nvidia-h200-x1`,
        `cpu-amd-epyc-2-cores` (gate/class_baselines.py names a class's baseline by it)."""
        if self.device == CUDA:
            parts = [CUDA, self.gpu_name or "unknown-gpu"]
            if self.gpu_count is not None:
                parts.append(f"x{self.gpu_count}")
        else:
            parts = [self.device or "unknown-device", self.cpu_model or "unknown-cpu"]
            if self.cpu_count is not None:
                parts.append(f"{self.cpu_count}-cores")
        return "-".join(_slug(part) for part in parts)


@dataclass(frozen=True)
class MachineFingerprint:
    """Everything a result records about its machine; `hardware_class` is what gates."""

    device: str | None
    gpu_name: str | None
    gpu_count: int | None
    driver: str | None
    cuda: str | None
    cpu_model: str | None
    cpu_count: int | None

    @classmethod
    def from_environment(cls, env: Environment) -> MachineFingerprint:
        return cls(
            device=env.device,
            gpu_name=env.gpu_name,
            gpu_count=env.gpu_count,
            driver=env.driver,
            cuda=env.cuda,
            cpu_model=env.cpu_model,
            cpu_count=env.cpu_count,
        )

    @classmethod
    def of(cls, document: ResultDocument) -> MachineFingerprint:
        return cls.from_environment(document.environment)

    @property
    def hardware_class(self) -> HardwareClass:
        if self.device == CUDA:
            return HardwareClass(CUDA, gpu_name=self.gpu_name, gpu_count=self.gpu_count)
        return HardwareClass(self.device, cpu_model=self.cpu_model, cpu_count=self.cpu_count)

    @property
    def cpu_model_recorded(self) -> bool:
        """Whether a CPU run can be matched to a class at all (a GPU run needs no CPU model)."""
        return self.device == CUDA or bool(self.cpu_model)


def _slug(text: str) -> str:
    """`Intel(R) Xeon(R) Platinum 8480+` → `intel-r-xeon-r-platinum-8480`."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"
