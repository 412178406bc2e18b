"""Facts about whole steps and variants (compare.py's rows with metric "step" or
"variant", and a new step's or variant's rows): whether each was compared at all, and
why not, as values. Every word of them is report/row_words/comparability.py's.

    RunFailedFacts           this run's step or variant failed (`error`)
    AddedFacts               a step or variant this run adds (`new`)
    RemovedFacts             a step or variant of the baseline this run does not have
    SkippedFacts             a baseline step left out of this run with --step
    OtherClassFacts          the baseline is another hardware class's: what hardware moves
                             is not judged (`incomparable`), the rest is (hardware_reach.py)
    BaselineFailedFacts      the baseline's run of it failed: nothing to judge against
    ConfigChangedFacts       the step's configuration changed (policy.step_config_mismatch)
    DefinitionChangedFacts   the variant's definition changed

Text from the documents themselves (a child's error) travels as a string; every "why" the
gate picks between is an enum whose values are identifiers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from ..results.machine import HardwareClass
from ..results.model import ChildFailure
from .row_facts_base import RowFactsBase


class Scope(str, Enum):
    """What a row is about as a whole."""

    STEP = "step"
    VARIANT = "variant"


class Unrecorded(str, Enum):
    """A setting's value where its document does not record the setting at all (distinct
    from a recorded None)."""

    NOT_RECORDED = "not_recorded"


NOT_RECORDED = Unrecorded.NOT_RECORDED


@dataclass(frozen=True)
class SettingChange:
    """One setting from the baseline's value to this run's (NOT_RECORDED where a side
    does not record it). `lowered_power`: a process count (config.POWER_SETTINGS) this run
    lowered below the baseline's floor, `before`."""

    name: str
    before: Any
    after: Any
    lowered_power: bool = False


class Mismatch(str, Enum):
    """Why two environments' timings are not compared (policy.environment_mismatch)."""

    DEVICE = "device"  # another device type
    GPU = "gpu_name"  # another GPU model
    CPU_MODEL_UNRECORDED = "cpu_model_unrecorded"  # on CPU, a side without its CPU model
    CPU_MODEL = "cpu_model"  # on CPU, another CPU model
    GPU_COUNT = "gpu_count"  # on CUDA, another number of GPUs (both recorded)
    CPU_CORES = "cpu_count"  # on CPU, another number of logical cores (both recorded)


@dataclass(frozen=True)
class EnvironmentMismatch:
    """The mismatch, with both sides' values of what differs (None: not recorded)."""

    what: Mismatch
    baseline: str | None
    current: str | None


class ConfigMismatch(str, Enum):
    """How a step's configuration changed (policy.step_config_mismatch)."""

    DEVICE = "device"  # the step ran on another device: one change, "device"
    FINGERPRINT = "fingerprint"  # a baseline without settings: one change, the fingerprint
    SETTINGS = "settings"  # its entry or comparable settings: each change


@dataclass(frozen=True)
class StepConfigChange:
    what: ConfigMismatch
    changes: tuple[SettingChange, ...]


class _FailedFacts(RowFactsBase):
    """A failed step's or variant's `error` and, where recorded (since issue 53), its
    `failure` as facts (report/child_failure_words.error_words says them)."""

    error: str | None
    failure: ChildFailure | None

    def to_dict(self) -> dict[str, Any]:
        """As before the failure was recorded, with the failure's JSON where there is one."""
        out = {k: v for k, v in super().to_dict().items() if k != "failure"}
        if self.failure is not None:
            out["failure"] = self.failure.to_json()
        return out


@dataclass(frozen=True)
class RunFailedFacts(_FailedFacts):
    kind: ClassVar[str] = "run_failed"
    scope: Scope
    error: str | None  # the document's error (the child's own words, when it said any)
    failure: ChildFailure | None = None


@dataclass(frozen=True)
class AddedFacts(RowFactsBase):
    """A new step's or variant's row (on a new step, each variant's speedup row names the
    step as what is new)."""

    kind: ClassVar[str] = "added"
    scope: Scope


@dataclass(frozen=True)
class RemovedFacts(RowFactsBase):
    kind: ClassVar[str] = "removed"
    scope: Scope


@dataclass(frozen=True)
class SkippedFacts(RowFactsBase):
    kind: ClassVar[str] = "skipped"


@dataclass(frozen=True)
class OtherClassFacts(RowFactsBase):
    """A step judged against a baseline of another hardware class (results/machine.py):
    only the metrics hardware does not move were judged (gate/hardware_reach.py); this row
    stands for the rest (speed, step times, compile seconds, memory), not judged.
    `same_device_type`: whether step-work and compile-work counts were judged too."""

    kind: ClassVar[str] = "other_class"
    mismatch: EnvironmentMismatch
    baseline_class: HardwareClass
    current_class: HardwareClass
    same_device_type: bool


@dataclass(frozen=True)
class BaselineFailedFacts(_FailedFacts):
    kind: ClassVar[str] = "baseline_failed"
    scope: Scope
    error: str | None  # the baseline's error (its child's own words)
    failure: ChildFailure | None = None


@dataclass(frozen=True)
class ConfigChangedFacts(RowFactsBase):
    kind: ClassVar[str] = "config_changed"
    change: StepConfigChange


@dataclass(frozen=True)
class DefinitionChangedFacts(RowFactsBase):
    """The variant's definition keys (mode, dynamic, ...) that differ, in definition order."""

    kind: ClassVar[str] = "definition_changed"
    changes: tuple[SettingChange, ...]
