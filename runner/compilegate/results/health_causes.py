"""Why a run's machine was unsteady, as facts: one frozen dataclass per cause, each with the
figures behind it and a code (`CauseCode`), and the JSON a document records of them.

A result records its causes in `run_health.unsteady` (results/run_health.py decides them,
report/health_words.py words them); a baseline marks a step recorded from an unsteady run
with their codes (`unsteady_times`, gate/baseline.py). Documents written before causes were
recorded as facts hold sentences there: each reads as a `RecordedCause`, said as recorded.
Kept apart from run_health.py so that the document model (results/model.py) can type them.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Union


class CauseCode(str, enum.Enum):
    """What made the machine unsteady, as `run_health.unsteady[].cause` and a baseline's
    `unsteady_times` record it."""

    OTHERS_TOOK_CPU = "others_took_cpu"
    LOAD_OVER_CORES = "load_over_cores"
    HYPERVISOR_STOLE = "hypervisor_stole"
    GPU_THROTTLED = "gpu_throttled"
    GPU_CLOCK_MOVED = "gpu_clock_moved"
    GPU_SHARED = "gpu_shared"
    AA_DISAGREED = "aa_disagreed"
    YARDSTICK_DRIFTED = "yardstick_drifted"


@dataclass(frozen=True)
class MeasuredCause:
    """A cause the run's own numbers show (the classes below): recorded as an object, its
    code under `cause` and its figures under their names."""

    CODE: ClassVar[CauseCode]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cause": self.CODE.value}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            out[item.name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class OthersTookCpu(MeasuredCause):
    """Other processes took more than OTHERS_CPU_LIMIT_PCT of the CPU."""

    CODE = CauseCode.OTHERS_TOOK_CPU
    others_cpu_pct: float
    load_average: float | None
    cores: int | None


@dataclass(frozen=True)
class LoadOverCores(MeasuredCause):
    """No CPU share known, and the load average was above the core count."""

    CODE = CauseCode.LOAD_OVER_CORES
    load_average: float
    cores: int


@dataclass(frozen=True)
class HypervisorStole(MeasuredCause):
    CODE = CauseCode.HYPERVISOR_STOLE
    steal_pct: float


@dataclass(frozen=True)
class GpuThrottled(MeasuredCause):
    CODE = CauseCode.GPU_THROTTLED
    reasons: tuple[str, ...]  # as NVML named them (run/gpu_state.py)


@dataclass(frozen=True)
class GpuClockMoved(MeasuredCause):
    """The SM clock moved by more than SM_CLOCK_MOVE_PCT while the GPU worked."""

    CODE = CauseCode.GPU_CLOCK_MOVED
    low_mhz: float
    high_mhz: float


@dataclass(frozen=True)
class GpuShared(MeasuredCause):
    CODE = CauseCode.GPU_SHARED
    other_processes: int


@dataclass(frozen=True)
class AaDisagreed(MeasuredCause):
    """Two identical copies of a step disagreed by more than AA_NOISE_LIMIT_PCT."""

    CODE = CauseCode.AA_DISAGREED
    noise_pct: float


@dataclass(frozen=True)
class YardstickDrifted(MeasuredCause):
    """The yardstick's fastest time moved by more than YARDSTICK_DRIFT_LIMIT_PCT between
    processes. `threads_on_idle`: nothing else was busy and the steps ran with several
    threads, the cause a user's config sets (timed on `cores`)."""

    CODE = CauseCode.YARDSTICK_DRIFTED
    drift_pct: float
    threads_on_idle: bool
    cores: int | None


@dataclass(frozen=True)
class RecordedCause:
    """A cause known only by the sentence its document recorded: a document from before
    causes were recorded as facts whose numbers do not account for its `unsteady` list
    (written by hand, or by another compilegate). Written back as recorded."""

    sentence: str

    def to_json(self) -> str:
        return self.sentence


UnsteadyCause = Union[
    OthersTookCpu,
    LoadOverCores,
    HypervisorStole,
    GpuThrottled,
    GpuClockMoved,
    GpuShared,
    AaDisagreed,
    YardstickDrifted,
    RecordedCause,
]
# A baseline step's `unsteady_times` item: a cause's code, or an older document's sentence.
UnsteadyMark = Union[CauseCode, RecordedCause]

_MEASURED: dict[str, type[MeasuredCause]] = {
    cls.CODE.value: cls
    for cls in (
        OthersTookCpu,
        LoadOverCores,
        HypervisorStole,
        GpuThrottled,
        GpuClockMoved,
        GpuShared,
        AaDisagreed,
        YardstickDrifted,
    )
}


def cause_of_json(raw: str | Mapping[str, Any]) -> UnsteadyCause:
    """One `run_health.unsteady` item of a schema-valid document, typed: an object by its
    `cause`, a sentence (an older document) as recorded."""
    if isinstance(raw, str):
        return RecordedCause(raw)
    cls = _MEASURED[raw["cause"]]
    values = {
        item.name: tuple(raw[item.name]) if item.name == "reasons" else raw.get(item.name)
        for item in dataclasses.fields(cls)
    }
    cause: UnsteadyCause = cls(**values)  # type: ignore[assignment]
    return cause


def mark_of_json(raw: str) -> UnsteadyMark:
    """One `unsteady_times` item, typed: a cause's code, else an older baseline's sentence."""
    try:
        return CauseCode(raw)
    except ValueError:
        return RecordedCause(raw)


def mark_of(cause: UnsteadyCause) -> UnsteadyMark:
    """What a baseline step's `unsteady_times` records of a cause: its code (a sentence an
    older result recorded stays that sentence)."""
    return cause if isinstance(cause, RecordedCause) else cause.CODE
