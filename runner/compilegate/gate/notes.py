"""What a reader of a comparison should know besides its rows (VerdictReport.notes), as
values: how it was paired, that its baseline is another hardware class's, what differs
between the two environments while they stay comparable, which thresholds the command
line set, and where this run's config asks for other thresholds than the gate applies.
Every word of them is report/note_words.py's.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from ..results.machine import HardwareClass
from .comparability import EnvironmentMismatch
from .pairing import Pairing


@dataclass(frozen=True)
class Note:
    """The base of every note; `kind` names it in the JSON."""

    kind: ClassVar[str] = "note"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}


@dataclass(frozen=True)
class PairedNote(Note):
    """A paired comparison (gate/pairing.py), timed in `pairs` pairs (None: not recorded)."""

    kind: ClassVar[str] = "paired"
    pairing: Pairing
    pairs: int | None


@dataclass(frozen=True)
class OtherClassNote(Note):
    """The baseline was measured on another hardware class (results/machine.py): each step
    is judged only on what hardware does not move (gate/hardware_reach.py)."""

    kind: ClassVar[str] = "other_class"
    mismatch: EnvironmentMismatch
    baseline_class: HardwareClass
    current_class: HardwareClass
    same_device_type: bool


@dataclass(frozen=True)
class ProbeOverruledNote(Note):
    """The measuring interpreter reported these hardware-class fields otherwise than
    compilegate read them (run/machine_reading.py); the result holds compilegate's reading,
    and the class judged is it."""

    kind: ClassVar[str] = "probe_overruled"
    fields: tuple[str, ...]


class Difference(str, Enum):
    """A difference between the environments that keeps them comparable (its key in
    `environment`)."""

    TORCH = "torch"
    DRIVER = "driver"
    CUDA = "cuda"
    HOST_CPU = "cpu_model"
    CPU_COUNT = "cpu_count"
    TORCH_THREADS = "torch_num_threads"


@dataclass(frozen=True)
class EnvironmentDifferenceNote(Note):
    kind: ClassVar[str] = "environment_difference"
    what: Difference
    baseline: Any
    current: Any


@dataclass(frozen=True)
class CommandLineThresholdsNote(Note):
    """`--threshold` values, (name, value) in the order given, for every step."""

    kind: ClassVar[str] = "command_line_thresholds"
    thresholds: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class UncheckedConfigNote(Note):
    """A baseline step that records neither settings nor a fingerprint."""

    kind: ClassVar[str] = "unchecked_config"
    step: str


@dataclass(frozen=True)
class AskedSetting:
    """A threshold (a float) or `gate_compile_wall_time` (a bool) this run's config asks
    for, beside the value the gate applies."""

    name: str
    asked: float | bool
    applied: float | bool


@dataclass(frozen=True)
class ThresholdsNotAppliedNote(Note):
    kind: ClassVar[str] = "thresholds_not_applied"
    step: str
    asked: tuple[AskedSetting, ...]
