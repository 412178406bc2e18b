"""Compare a result document with its baseline: a verdict per step × variant × metric.

The per-metric rules — directions, thresholds and the noise rule (a speed change is a
regression only when it is beyond the threshold *and* beyond the noise; beyond the
threshold but inside the noise it is `inconclusive`) — live in metric_rules.py; how step
times and speedups are compared across runs (both runs' processes pooled, in yardstick
units or raw) in step_times.py. This module decides what is compared with what, and what
is not:

- Thresholds per step: config.DEFAULT_THRESHOLDS, overlaid by the step's
  `settings.thresholds` (this run's, else the baseline's), overlaid by `thresholds_override`.
- Environment guard: a baseline from another device type or GPU model (or, on CPU, another
  processor architecture) makes every step present in both `incomparable`, with the reason.
  Another torch version stays comparable — that is the upgrade question — and both versions
  are stated in the report's notes.
- A step whose configuration changed (its entry, or any of config.COMPARABLE_SETTINGS: the
  inputs of StepConfig.fingerprint()) is `incomparable`, naming the setting. When the fingerprints
  differ only because the variant list changed, the variants are matched by id: an added
  one is `new`, a dropped one `removed`, one whose definition (mode, dynamic, compile
  target, fullgraph, backend) changed `incomparable`. Changes to the user's model code are
  what the gate measures and never block a comparison.
- Steps only in the baseline are `removed`; steps and variants only in this run are `new`,
  as are those whose baseline run failed. A step or variant that failed in this run is
  `error`, whatever the baseline says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import COMPARABLE_SETTINGS, DEFAULT_THRESHOLDS
from ..errors import UsageError
from .metric_rules import (
    HIGHER_IS_BETTER,
    Subject,
    is_number,
    judge_compile_time,
    judge_count,
    judge_graph_breaks,
    judge_numerics,
    judge_peak_memory,
    recompile_detail,
)
from .step_times import SpeedComparison
from .verdict import EnvironmentSummary, MetricVerdict, VerdictReport

VARIANT_DEFINITION = {
    "mode": "default",
    "dynamic": None,
    "compile_target": "model",
    "fullgraph": False,
    "backend": "inductor",
}

Doc = Mapping[str, Any]


def compare_to_baseline(
    baseline_doc: Doc, result_doc: Doc, thresholds_override: Mapping[str, float] | None = None
) -> VerdictReport:
    """Judge every step, variant and metric of `result_doc` against `baseline_doc`."""
    override = validate_threshold_override(thresholds_override)
    base_env = baseline_doc.get("environment") or {}
    cur_env = result_doc.get("environment") or {}
    notes: list[str] = []
    env_reason = environment_mismatch(base_env, cur_env)
    if env_reason:
        notes.append(f"baseline not compared: {env_reason}; record a baseline on this runner")
    notes.extend(environment_notes(base_env, cur_env))
    speeds = SpeedComparison.between(baseline_doc, result_doc)
    base_steps = {step["name"]: step for step in baseline_doc.get("steps", [])}
    rows: list[MetricVerdict] = []
    for cur in result_doc.get("steps", []):
        base = base_steps.get(cur["name"])
        rows.extend(_compare_step(base, cur, env_reason, override, notes, speeds))
    current_names = {step["name"] for step in result_doc.get("steps", [])}
    for name in base_steps:
        if name not in current_names:
            rows.append(
                Subject(name).row("step", "removed", "step removed: in the baseline, not run now")
            )
    return VerdictReport(
        verdicts=tuple(rows),
        baseline=EnvironmentSummary.from_document(baseline_doc),
        current=EnvironmentSummary.from_document(result_doc),
        notes=tuple(notes),
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


def resolve_thresholds(
    cur_step: Doc, base_step: Doc | None = None, override: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Defaults, then the step's own thresholds (this run's, else the baseline's), then override."""
    merged = {name: float(value) for name, value in DEFAULT_THRESHOLDS.items()}
    for step in (cur_step, base_step):
        declared = ((step or {}).get("settings") or {}).get("thresholds")
        if isinstance(declared, Mapping) and declared:
            merged.update(
                {k: float(v) for k, v in declared.items() if k in merged and is_number(v)}
            )
            break
    merged.update(override or {})
    return merged


def environment_mismatch(base_env: Doc, cur_env: Doc) -> str | None:
    """Why timings from these two environments cannot be compared, or None when they can."""
    for key, unknown in (("device", "an unknown device"), ("gpu_name", "an unknown GPU")):
        base, cur = base_env.get(key), cur_env.get(key)
        if base != cur:
            return f"the baseline was measured on {base or unknown}, this run on {cur or unknown}"
    base_cpu, cur_cpu = base_env.get("processor"), cur_env.get("processor")
    if cur_env.get("device") == "cpu" and base_cpu and cur_cpu and base_cpu != cur_cpu:
        return f"the baseline was measured on a {base_cpu} CPU, this run on {cur_cpu}"
    return None


def environment_notes(base_env: Doc, cur_env: Doc) -> list[str]:
    """Differences that keep the runs comparable but that a reader should know about."""
    notes = []
    if base_env.get("torch") != cur_env.get("torch"):
        notes.append(
            f"torch {base_env.get('torch')} (baseline) vs {cur_env.get('torch')} (this run): "
            "compared, since that difference is what an upgrade gate measures"
        )
    for key, label in (("cpu_count", "CPU count"), ("torch_num_threads", "torch threads")):
        if base_env.get(key) is not None and base_env.get(key) != cur_env.get(key):
            notes.append(f"{label} {base_env[key]} (baseline) vs {cur_env.get(key)} (this run)")
    return notes


def step_config_mismatch(base_step: Doc, cur_step: Doc) -> str | None:
    """Why this step's configuration makes its baseline incomparable, or None."""
    base_dev, cur_dev = base_step.get("device"), cur_step.get("device")
    if base_dev and cur_dev and base_dev != cur_dev:
        return f"the step ran on {base_dev} in the baseline and on {cur_dev} now"
    base_fp, cur_fp = base_step.get("config_fingerprint"), cur_step.get("config_fingerprint")
    if not base_fp or not cur_fp or base_fp == cur_fp:
        return None
    changed = []
    if base_step.get("entry") != cur_step.get("entry"):
        changed.append(f"entry {base_step.get('entry')!r} → {cur_step.get('entry')!r}")
    base_set, cur_set = base_step.get("settings") or {}, cur_step.get("settings") or {}
    if not all("warmup" in s and "iterations" in s for s in (base_set, cur_set)):
        return f"the step's configuration changed (fingerprint {base_fp} → {cur_fp})"
    for key in COMPARABLE_SETTINGS:
        if base_set.get(key) != cur_set.get(key):
            changed.append(f"{key} {base_set.get(key)!r} → {cur_set.get(key)!r}")
    if changed:
        return "the step's configuration changed: " + ", ".join(changed)
    return None  # only the variant list changed: the variants are matched one by one


def _compare_step(
    base: Doc | None,
    cur: Doc,
    env_reason: str | None,
    override: dict[str, float],
    notes: list[str],
    speeds: SpeedComparison,
) -> list[MetricVerdict]:
    step = Subject(cur["name"])
    if cur.get("status") == "error":
        return [step.row("step", "error", f"step failed: {cur.get('error') or 'unknown error'}")]
    variants = cur.get("variants", [])
    errors = [_variant_error(step.step, v) for v in variants if v.get("status") == "error"]
    ok = [v for v in variants if v.get("status") != "error"]
    if base is None:
        return errors + _new_rows(step.step, ok, "new step: not in the baseline")
    if env_reason:
        return [*errors, step.row("step", "incomparable", f"not compared: {env_reason}")]
    if base.get("status") == "error":
        why = f"no usable baseline: the baseline run of this step failed ({base.get('error')})"
        return errors + _new_rows(step.step, ok, why)
    reason = step_config_mismatch(base, cur)
    if reason:
        return [*errors, step.row("step", "incomparable", f"not compared: {reason}")]
    if not base.get("config_fingerprint") or not cur.get("config_fingerprint"):
        notes.append(
            f"step {step.step}: no config fingerprint on one side; "
            "its configuration could not be checked"
        )
    thresholds = resolve_thresholds(cur, base, override)
    rows: list[MetricVerdict | None] = [
        speeds.eager(
            Subject(step.step, "eager"), (base, cur), thresholds["eager_step_time_growth_pct"]
        )
    ]
    base_variants = {v["id"]: v for v in base.get("variants", [])}
    for variant in variants:
        rows.extend(
            _compare_variant(
                step.step,
                base_variants.get(variant["id"]),
                variant,
                thresholds,
                (base, cur),
                speeds,
            )
        )
    current_ids = {v["id"] for v in variants}
    for vid in base_variants:
        if vid not in current_ids:
            rows.append(
                Subject(step.step, vid).row(
                    "variant", "removed", "variant removed: in the baseline, not run now"
                )
            )
    return [row for row in rows if row is not None]


def _compare_variant(
    step: str,
    base: Doc | None,
    cur: Doc,
    thresholds: dict[str, float],
    steps: tuple[Doc, Doc],
    speeds: SpeedComparison,
) -> list[MetricVerdict]:
    subject = Subject(step, cur["id"])
    if cur.get("status") == "error":
        return [_variant_error(step, cur)]
    if base is None:
        return _new_rows(step, [cur], "new variant: not in the baseline")
    if base.get("status") == "error":
        why = f"no usable baseline: the baseline run of this variant failed ({base.get('error')})"
        return _new_rows(step, [cur], why)
    before, after = _variant_definition(base), _variant_definition(cur)
    if before != after:
        changed = [f"{k} {before[k]!r} → {after[k]!r}" for k in before if before[k] != after[k]]
        why = "not compared: the variant's definition changed: " + ", ".join(changed)
        return [subject.row("variant", "incomparable", why)]
    judged = [
        speeds.speedup(subject, (base, cur), thresholds["speedup_drop_pct"]),
        speeds.compiled(subject, (base, cur), steps, thresholds["compiled_step_time_growth_pct"]),
        judge_compile_time(
            subject,
            base.get("compile_s"),
            cur.get("compile_s"),
            thresholds["compile_time_growth_pct"],
        ),
        judge_count(
            subject,
            "recompiles",
            "recompiles",
            _get(base, "recompiles", "count"),
            _get(cur, "recompiles", "count"),
            thresholds["recompiles_increase"],
            recompile_detail(base, cur),
        ),
        judge_graph_breaks(
            subject,
            base.get("graph_breaks"),
            cur.get("graph_breaks"),
            thresholds["graph_break_sites_increase"],
        ),
        judge_count(
            subject,
            "fallbacks_to_eager",
            "fallbacks to eager",
            base.get("fallbacks_to_eager"),
            cur.get("fallbacks_to_eager"),
            thresholds["fallbacks_increase"],
            "".join(f"; {r}" for r in (cur.get("fallback_reasons") or [])[:1]),
        ),
        judge_numerics(subject, base.get("numerics"), cur.get("numerics")),
        judge_peak_memory(
            subject,
            base.get("peak_bytes"),
            cur.get("peak_bytes"),
            thresholds["peak_memory_growth_pct"],
        ),
    ]
    return [row for row in judged if row is not None]


def _variant_error(step: str, variant: Doc) -> MetricVerdict:
    message = f"variant failed: {variant.get('error') or 'unknown error'}"
    return Subject(step, variant["id"]).row("variant", "error", message)


def _new_rows(step: str, variants: list[Doc], why: str) -> list[MetricVerdict]:
    """One `new` row per variant, carrying its speedup; a step-level row when none ran."""
    if not variants:
        return [Subject(step).row("step", "new", why)]
    return [
        Subject(step, v["id"]).row(
            "speedup",
            "new",
            why,
            direction=HIGHER_IS_BETTER,
            unit="x",
            current=_get(v, "speedup", "median"),
        )
        for v in variants
    ]


def _variant_definition(variant: Doc) -> dict[str, Any]:
    return {key: variant.get(key, default) for key, default in VARIANT_DEFINITION.items()}


def _get(doc: Doc | None, *keys: str) -> Any:
    for key in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(key)
    return doc
