"""The words of the rows about a whole step or variant (gate/comparability.py): failed,
new, removed, skipped, not compared and why."""

from __future__ import annotations

from typing import Any

from ...gate.comparability import (
    NOT_RECORDED,
    AddedFacts,
    BaselineFailedFacts,
    ConfigChangedFacts,
    ConfigMismatch,
    DefinitionChangedFacts,
    EnvironmentMismatch,
    Mismatch,
    OtherClassFacts,
    RemovedFacts,
    RunFailedFacts,
    Scope,
    SettingChange,
    SkippedFacts,
    StepConfigChange,
)
from ...gate.hardware_reach import metrics_judged_across
from ...gate.verdict import MetricVerdict
from ...results.machine import CUDA, HardwareClass
from ..child_failure_words import error_words
from ..wording import metric_name

NOT_RECORDED_WORDS = "(not recorded)"
UNKNOWN_ERROR = "unknown error"
_UNKNOWN = {Mismatch.DEVICE: "an unknown device", Mismatch.GPU: "an unknown GPU"}
_REMOVED = {
    Scope.STEP: "step removed: in the baseline, not in this run's config",
    Scope.VARIANT: "variant removed: in the baseline, not run now",
}


def environment_mismatch_words(mismatch: EnvironmentMismatch) -> str:
    """Why the two environments' timings are not compared."""
    base, cur = mismatch.baseline, mismatch.current
    if mismatch.what in _UNKNOWN:
        unknown = _UNKNOWN[mismatch.what]
        return f"the baseline was measured on {base or unknown}, this run on {cur or unknown}"
    if mismatch.what is Mismatch.CPU_MODEL_UNRECORDED:
        side = "the baseline" if not base else "this run"
        return f"{side} does not record its CPU model, so the machines cannot be matched"
    if mismatch.what is Mismatch.GPU_COUNT:
        return f"the baseline was measured with {base} GPU(s), this run with {cur}"
    if mismatch.what is Mismatch.CPU_CORES:
        return f"the baseline was measured on {base} CPU cores, this run on {cur}"
    return f"the baseline was measured on CPU {base}, this run on CPU {cur}"


def hardware_class_words(machine: HardwareClass) -> str:
    """`NVIDIA H200 ×1`, `CPU AMD EPYC (2 cores)`: a hardware class as a reader names it."""
    if machine.device == CUDA:
        count = f" ×{machine.gpu_count}" if machine.gpu_count is not None else ""
        return f"{machine.gpu_name or 'an unknown GPU'}{count}"
    cores = f" ({machine.cpu_count} cores)" if machine.cpu_count is not None else ""
    what = "CPU" if machine.device == "cpu" else (machine.device or "an unknown device")
    return f"{what} {machine.cpu_model or '(model not recorded)'}{cores}"


_CLASS_BOUND = "step speed, step times, compile time (wall, CPU, instructions) and peak memory"
_DEVICE_BOUND = "step work and compile work (another device type)"


def other_class_words(
    baseline: HardwareClass, current: HardwareClass, same_device_type: bool
) -> str:
    """What a comparison across hardware classes judged and what it left: "baseline from
    another hardware class (NVIDIA H200 ×1; this run: CPU AMD EPYC (2 cores)): judged only
    on what hardware does not move — graph breaks, …; not judged: …"."""
    judged = ", ".join(metric_name(m) for m in metrics_judged_across(same_device_type))
    return (
        f"baseline from another hardware class ({_classes(baseline, current)}): judged only "
        f"on what hardware does not move — {judged}; not judged: {_not_judged(same_device_type)}"
    )


def _classes(baseline: HardwareClass, current: HardwareClass) -> str:
    return f"{hardware_class_words(baseline)}; this run: {hardware_class_words(current)}"


def _not_judged(same_device_type: bool) -> str:
    return _CLASS_BOUND if same_device_type else f"{_DEVICE_BOUND}, {_CLASS_BOUND}"


def config_change_words(change: StepConfigChange) -> str:
    """Why a step's configuration makes its baseline incomparable."""
    if change.what is ConfigMismatch.DEVICE:
        (device,) = change.changes
        return f"the step ran on {device.before} in the baseline and on {device.after} now"
    if change.what is ConfigMismatch.FINGERPRINT:
        (fingerprint,) = change.changes
        return (
            "the step's configuration changed "
            f"(fingerprint {fingerprint.before} → {fingerprint.after})"
        )
    return "the step's configuration changed: " + ", ".join(
        _setting_words(c) for c in change.changes
    )


def _setting_words(change: SettingChange) -> str:
    moved = f"{change.name} {_shown(change.before)} → {_shown(change.after)}"
    if change.lowered_power:
        moved += (
            f" (the baseline's policy times the step in at least {change.before!r}: "
            "fewer processes lower the gate's power)"
        )
    return moved


def _shown(value: Any) -> str:
    return NOT_RECORDED_WORDS if value is NOT_RECORDED else repr(value)


def run_failed_words(row: MetricVerdict, facts: RunFailedFacts) -> str:
    return f"{facts.scope.value} failed: {error_words(facts.error, facts.failure) or UNKNOWN_ERROR}"


def added_words(row: MetricVerdict, facts: AddedFacts) -> str:
    return f"new {facts.scope.value}: not in the baseline"


def removed_words(row: MetricVerdict, facts: RemovedFacts) -> str:
    return _REMOVED[facts.scope]


def skipped_words(row: MetricVerdict, facts: SkippedFacts) -> str:
    return "not selected in this run (--step): not compared"


def other_class_row_words(row: MetricVerdict, facts: OtherClassFacts) -> str:
    # The classes first: the first screen keeps a reason's first 200 characters.
    left = "step speed, step times, compile time, peak memory"
    if not facts.same_device_type:
        left += ", and (another device type) step work and compile work"
    return (
        "not judged against another hardware class "
        f"({_classes(facts.baseline_class, facts.current_class)}): {left}"
    )


def baseline_failed_words(row: MetricVerdict, facts: BaselineFailedFacts) -> str:
    return (
        f"no usable baseline: the baseline run of this {facts.scope.value} failed "
        f"({error_words(facts.error, facts.failure) or UNKNOWN_ERROR})"
    )


def config_changed_words(row: MetricVerdict, facts: ConfigChangedFacts) -> str:
    return f"not compared: {config_change_words(facts.change)}"


def definition_changed_words(row: MetricVerdict, facts: DefinitionChangedFacts) -> str:
    changed = ", ".join(f"{c.name} {c.before!r} → {c.after!r}" for c in facts.changes)
    return "not compared: the variant's definition changed: " + changed
