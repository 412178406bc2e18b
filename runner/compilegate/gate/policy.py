"""The gate's policy, and whether two runs may be compared at all.

Policy comes from the baseline side. A pull request controls its own compilegate.yml, and
that config is recorded in the result it produces; if the gate judged a result by its own
thresholds, a PR could pass any regression by loosening them. So:

- Thresholds: config.DEFAULT_THRESHOLDS, overlaid by the *baseline* step's
  `settings.thresholds` (every run records its step's effective thresholds there, so the
  baseline written by `compilegate baseline update` on the default branch carries the
  default branch's policy), overlaid by `--threshold` on the command line (the operator's,
  in a trusted workflow). This run's own thresholds are never used; where they differ they
  are shown beside the baseline's in a note.
- Numerics tolerances (`numerics.tol`, `cosine_min`, `steps`, `enabled`) are comparable
  settings (config.COMPARABLE_SETTINGS): the compiled-vs-eager check runs in the child with
  the run's own tolerance, so a run with other tolerances is `incomparable`, naming both.
- The gate's power: `warmup`, `iterations` and `rounds` are comparable settings (equal on
  both sides: each changes what a process's fastest iteration and quantiles estimate), and
  `eager_processes` / `variant_processes` / `cold_compiles` (POWER_SETTINGS) may not fall
  below the baseline's. A pull request that times its step in fewer processes widens the noise until
  a regression reads `inconclusive` (exit 0); the gate calls that `incomparable` instead,
  naming the setting. More processes than the baseline's only narrow the noise.
- What is measured: `epoch_length` (config `epoch: {length: N}`) is a comparable setting
  too: without it the compiled copy never runs the epoch's last batch, so a pull request
  that adds a recompile there and deletes the line would read `recompiles 0 → 0` (issue 29).
- `compilegate run --baseline` measures with the baseline's ADOPTED_SETTINGS (warm-up,
  iterations, rounds, epoch length) and at least its process counts instead, and says so
  (`adopt_baseline_power`): the run it makes is then comparable. Where nothing adopts them
  (`matrix --baseline`: each version's run has its config only), the comparison above holds.
- Every other field of a step is in config.STEP_FIELD_POLICY: the baseline's, or the
  run's own where it cannot change a verdict (`timeout_s`, `steps_per_run`).
- Compile wall time fails the job only where the baseline's step records
  `gate_compile_wall_time: true` (a dedicated runner): it moves with the machine's load
  (judges/compile_cost.py).
- What fails the job is not configurable at all (gate/verdict.py VERDICT_EXIT_CODES).

Comparability. Another hardware class (results/machine.py: device type, GPU model and count,
or on CPU the CPU model — `environment.cpu_model`; `processor` is only `x86_64` on Linux —
and cores) is judged only on what hardware does not move (gate/hardware_reach.py). Another
torch version or NVIDIA driver is compared — that is the upgrade question — and stated in
the notes. A step whose entry or any comparable setting changed is incomparable, naming
the setting; settings are compared one by one, so a result without them (or without a
fingerprint) cannot slip past the check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..config import COMPARABLE_SETTINGS, DEFAULT_THRESHOLDS, POWER_SETTINGS, Config, StepConfig
from ..config.model import ADOPTED_SETTINGS, MIN_WARMUP_REDUCE_OVERHEAD, SETTINGS_ABSENT_AS
from ..errors import UsageError
from ..results.machine import MachineFingerprint
from ..results.model import Environment, ResultDocument, Step
from .comparability import (
    NOT_RECORDED,
    ConfigMismatch,
    EnvironmentMismatch,
    Mismatch,
    SettingChange,
    StepConfigChange,
)
from .notes import (
    AskedSetting,
    Difference,
    EnvironmentDifferenceNote,
    Note,
    ThresholdsNotAppliedNote,
)
from .rules import is_number

Doc = Mapping[str, Any]


@dataclass(frozen=True)
class AdoptedSetting:
    """A setting measured with the baseline's value instead of the config's."""

    name: str
    baseline: Any
    config: Any


@dataclass(frozen=True)
class AdoptedPower:
    """A step measured with the baseline's power (adopt_baseline_power), setting by
    setting; report/note_words.adopted_power_words says it."""

    step: str
    settings: tuple[AdoptedSetting, ...]


@dataclass(frozen=True)
class StepPolicy:
    """The rules one step is judged by, all from the baseline side (and the operator's
    --threshold): thresholds, whether numerics must be checked, whether compile wall time
    may fail the job."""

    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    numerics_required: bool = False
    gate_compile_wall_time: bool = False

    @classmethod
    def from_baseline(cls, base: Step, override: Mapping[str, float] | None = None) -> StepPolicy:
        settings = base.settings or {}
        numerics = settings.get("numerics")
        numerics_required = (
            isinstance(numerics, Mapping)
            and bool(numerics.get("enabled"))
            and numerics.get("steps", 1) != 0
        )
        return cls(
            thresholds=resolve_thresholds(settings, override),
            numerics_required=numerics_required,
            gate_compile_wall_time=settings.get("gate_compile_wall_time") is True,
        )


def validate_threshold_override(override: Mapping[str, Any] | None) -> dict[str, float]:
    """Known names and numbers >= 0 only: a typo must not silently change nothing."""
    checked: dict[str, float] = {}
    for name, value in (override or {}).items():
        if name not in DEFAULT_THRESHOLDS:
            known = ", ".join(sorted(DEFAULT_THRESHOLDS))
            raise UsageError(f"unknown threshold {name!r}; known: {known}")
        if not is_number(value) or value < 0:
            raise UsageError(f"threshold {name}: expected a number >= 0, got {value!r}")
        checked[name] = float(value)
    return checked


def declared_thresholds(settings: Doc | None) -> dict[str, float]:
    """The thresholds a step's run recorded (its `settings.thresholds`), known names only."""
    declared = (settings or {}).get("thresholds")
    if not isinstance(declared, Mapping):
        return {}
    return {k: float(v) for k, v in declared.items() if k in DEFAULT_THRESHOLDS and is_number(v)}


def resolve_thresholds(
    settings: Doc | None, override: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Defaults, then the baseline step's thresholds (its `settings`), then the command
    line's override."""
    merged = {name: float(value) for name, value in DEFAULT_THRESHOLDS.items()}
    merged.update(declared_thresholds(settings))
    merged.update(override or {})
    return merged


def threshold_notes(step_name: str, base: Step, cur: Step, applied: Doc) -> list[Note]:
    """Where this run's config asks for other thresholds than the ones applied, say so."""
    asked = declared_thresholds(cur.settings)
    differ = [
        AskedSetting(name, asked[name], applied[name])
        for name in DEFAULT_THRESHOLDS
        if name in asked and asked[name] != applied[name]
    ]
    wall_asked = (cur.settings or {}).get("gate_compile_wall_time")
    wall_applied = (base.settings or {}).get("gate_compile_wall_time") is True
    if isinstance(wall_asked, bool) and wall_asked != wall_applied:
        differ.append(AskedSetting("gate_compile_wall_time", wall_asked, wall_applied))
    if not differ:
        return []
    return [ThresholdsNotAppliedNote(step_name, tuple(differ))]


def environment_mismatch(base_env: Environment, cur_env: Environment) -> EnvironmentMismatch | None:
    """Why these two environments are different hardware classes (results/machine.py), or
    None when they are one class: the first of device type, GPU model, then on CUDA the GPU
    count, on CPU the CPU model (recorded on both sides) and its cores. A count one side
    does not record does not tell them apart."""
    base = MachineFingerprint.from_environment(base_env)
    cur = MachineFingerprint.from_environment(cur_env)
    for what in (Mismatch.DEVICE, Mismatch.GPU):
        before, after = getattr(base, what.value), getattr(cur, what.value)
        if before != after:
            return EnvironmentMismatch(what, before, after)
    counted = None
    if cur.device == "cuda":
        counted = Mismatch.GPU_COUNT
    elif cur.device == "cpu":
        if not base.cpu_model_recorded or not cur.cpu_model_recorded:
            return EnvironmentMismatch(Mismatch.CPU_MODEL_UNRECORDED, base.cpu_model, cur.cpu_model)
        if base.cpu_model != cur.cpu_model:
            return EnvironmentMismatch(Mismatch.CPU_MODEL, base.cpu_model, cur.cpu_model)
        counted = Mismatch.CPU_CORES
    if counted is not None:
        before, after = getattr(base, counted.value), getattr(cur, counted.value)
        if before is not None and after is not None and before != after:
            return EnvironmentMismatch(counted, str(before), str(after))
    return None


def environment_notes(base_env: Environment, cur_env: Environment) -> list[Note]:
    """Differences that keep the runs comparable but that a reader should know about."""
    keys = [Difference.TORCH]
    if cur_env.device == "cuda":
        keys.append(Difference.DRIVER)
    notes: list[Note] = []
    for key in keys:
        base, cur = getattr(base_env, key.value), getattr(cur_env, key.value)
        if base != cur:
            notes.append(EnvironmentDifferenceNote(key, base, cur))
    if cur_env.device == "cuda":
        for key in (Difference.CUDA, Difference.HOST_CPU):
            base, cur = getattr(base_env, key.value), getattr(cur_env, key.value)
            if base and base != cur:
                notes.append(EnvironmentDifferenceNote(key, base, cur))
    for key in (Difference.CPU_COUNT, Difference.TORCH_THREADS):
        base, cur = getattr(base_env, key.value), getattr(cur_env, key.value)
        if base is not None and base != cur:
            notes.append(EnvironmentDifferenceNote(key, base, cur))
    return notes


def step_config_mismatch(
    base_step: Step, cur_step: Step, *, other_device_type: bool = False
) -> StepConfigChange | None:
    """Why this step's configuration makes its baseline incomparable, or None.

    None also when only the variant list changed: the variants are then matched by id.
    `other_device_type`: the two runs' machines are of different device types (another
    hardware class), so the device each step resolved to differs by the machine, not the
    config; the declared `device` setting is still compared.
    """
    base_dev, cur_dev = base_step.device, cur_step.device
    if base_dev and cur_dev and base_dev != cur_dev and not other_device_type:
        return StepConfigChange(
            ConfigMismatch.DEVICE, (SettingChange("device", base_dev, cur_dev),)
        )
    changed = []
    if base_step.entry != cur_step.entry:
        changed.append(SettingChange("entry", _entry(base_step), _entry(cur_step)))
    base_set, cur_set = _with_absent(base_step), _with_absent(cur_step)
    if any(key in base_set for key in COMPARABLE_SETTINGS):
        changed.extend(
            SettingChange(key, _recorded(base_set, key), _recorded(cur_set, key))
            for key in COMPARABLE_SETTINGS
            if key not in base_set or key not in cur_set or base_set[key] != cur_set[key]
        )
    else:  # a baseline without its settings: only the fingerprint can tell
        base_fp, cur_fp = base_step.config_fingerprint, cur_step.config_fingerprint
        if base_fp and base_fp != cur_fp:
            fingerprint = SettingChange("config_fingerprint", base_fp, cur_fp)
            return StepConfigChange(ConfigMismatch.FINGERPRINT, (fingerprint,))
    changed.extend(_less_power(base_set, cur_set))
    if changed:
        return StepConfigChange(ConfigMismatch.SETTINGS, tuple(changed))
    return None


def _with_absent(step: Step) -> Doc:
    """The step's recorded settings, a setting recorded only by later compilegates
    (config.SETTINGS_ABSENT_AS) read as what its absence meant; no settings stay none."""
    return _settings_with_absent(step.settings)


def _settings_with_absent(settings: Doc | None) -> Doc:
    if not settings:
        return {}
    return {**SETTINGS_ABSENT_AS, **settings}


def _less_power(base_set: Doc, cur_set: Doc) -> list[SettingChange]:
    """POWER_SETTINGS this run lowered below the baseline's (a baseline that predates them
    sets no floor)."""
    lowered = []
    for key in POWER_SETTINGS:
        floor = base_set.get(key)
        if not is_number(floor):
            continue
        asked = cur_set.get(key)
        if not is_number(asked) or asked < floor:
            lowered.append(SettingChange(key, floor, _recorded(cur_set, key), lowered_power=True))
    return lowered


def _recorded(doc: Doc, key: str) -> Any:
    return doc[key] if key in doc else NOT_RECORDED


def _entry(step: Step) -> Any:
    return step.entry if step.entry is not None else NOT_RECORDED


def adopt_baseline_power(
    config: Config, baseline: ResultDocument
) -> tuple[Config, list[AdoptedPower]]:
    """The config with each step's ADOPTED_SETTINGS (`warmup`, `iterations`, `rounds`,
    `epoch_length`) as the baseline recorded them, and its process counts at least the
    baseline's. Returns the config to measure with and what changed, per step changed."""
    steps: list[StepConfig] = []
    notes: list[AdoptedPower] = []
    for step in config.steps:
        base_step = baseline.step(step.name)
        settings = _settings_with_absent(base_step.settings if base_step is not None else None)
        wanted = {
            key: settings[key]
            for key in ADOPTED_SETTINGS
            if key in settings
            and _adoptable(key, settings[key])
            and settings[key] != getattr(step, key)
        }
        wanted.update(
            (key, settings[key])
            for key in POWER_SETTINGS
            if _count(settings.get(key)) and settings[key] > getattr(step, key)
        )
        if any(v.mode == "reduce-overhead" for v in step.variants):
            if wanted.get("warmup", step.warmup) < MIN_WARMUP_REDUCE_OVERHEAD:
                wanted.pop("warmup", None)  # CUDA graphs need it: the gate names the change
        if wanted.get("rounds", step.rounds) > wanted.get("iterations", step.iterations):
            wanted.pop("rounds", None)
            wanted.pop("iterations", None)
        if not wanted:
            steps.append(step)
            continue
        adopted = tuple(
            AdoptedSetting(key, value, getattr(step, key)) for key, value in wanted.items()
        )
        notes.append(AdoptedPower(step.name, adopted))
        steps.append(dataclasses.replace(step, **wanted))
    return dataclasses.replace(config, steps=tuple(steps)), notes


def _adoptable(key: str, value: Any) -> bool:
    """A recorded value that may be measured with: a count, or no epoch schedule."""
    return _count(value) or (key == "epoch_length" and value is None)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
