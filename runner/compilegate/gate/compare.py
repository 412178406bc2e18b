"""Compare a result document with its baseline: a verdict per step × variant × metric.

One pass: for each step, the policy is read from the baseline's side once
(policy.StepPolicy), then every judge of judges/ gets the baseline's and this run's
documents of its subject (judges.Sides) and returns its rows: the eager judges once per
step, the variant judges once per variant present on both sides. How a metric is judged
lives in its judge; this module decides what is compared with what, and what is not:

- Environment guard (policy.environment_mismatch): another device type, GPU model or CPU
  model makes every step present in both `incomparable`, with the reason.
- A step whose entry or comparable settings changed is `incomparable`, naming the setting.
  When only the variant list changed, the variants are matched by id: an added one is
  `new`, a dropped one `removed`, one whose definition (mode, dynamic, compile target,
  fullgraph, backend) changed `incomparable`. Changes to the user's model code are what
  the gate measures and never block a comparison.
- A baseline step missing from this result is `removed`, unless the result says it was
  declared but left out with --step (`declared_steps`): then it is `skipped`. Steps and
  variants only in this run are `new`. A step or variant whose baseline run failed has
  nothing to be judged against: `incomparable` (baseline update keeps a variant's last good
  measurement, so this only happens when it never had one). A step or variant that failed
  in this run is `error`, whatever the baseline says.
- A gated metric measured on one side only, or not a finite number, is `missing`; so are
  numerics when the baseline's policy checks them and this run has no pass/fail verdict
  (gate/rules.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..results.model import ResultDocument, Step, Variant
from .judges import EAGER_JUDGES, VARIANT_JUDGES, Sides, SpeedUnits
from .pairing import Pairing
from .policy import (
    StepPolicy,
    environment_mismatch,
    environment_notes,
    step_config_mismatch,
    threshold_notes,
    validate_threshold_override,
)
from .rules import HIGHER_IS_BETTER, Subject
from .verdict import EnvironmentSummary, MetricVerdict, VerdictReport

How = tuple[SpeedUnits, "Pairing | None", tuple[str, ...]]


def compare_to_baseline(
    baseline: ResultDocument,
    result: ResultDocument,
    thresholds_override: Mapping[str, float] | None = None,
) -> VerdictReport:
    """Judge every step, variant and metric of `result` against `baseline` (both read
    through results/model.parse), under the baseline's policy (policy.py) and the
    operator's `thresholds_override`."""
    override = validate_threshold_override(thresholds_override)
    base_env, cur_env = baseline.environment, result.environment
    notes: list[str] = []
    pairing = Pairing.between(baseline, result)
    pairs = _pairs(baseline)
    if pairing is not None:
        notes.append(pairing.note(pairs))
    env_reason = environment_mismatch(base_env, cur_env)
    if env_reason:
        notes.append(f"baseline not compared: {env_reason}; record a baseline on this runner")
    notes.extend(environment_notes(base_env, cur_env))
    if override:
        shown = ", ".join(f"{name} {value:g}" for name, value in override.items())
        notes.append(f"thresholds set on the command line, for every step: {shown}")
    units = SpeedUnits.between(baseline, result)
    unsteady = result.run_health.unsteady if result.run_health is not None else ()
    how = (units, pairing, unsteady)
    base_steps = {step.name: step for step in baseline.steps}
    rows: list[MetricVerdict] = []
    for cur in result.steps:
        base = base_steps.get(cur.name)
        rows.extend(_compare_step(base, cur, env_reason, override, notes, how))
    current_names = set(result.step_names)
    declared = set(result.declared_steps or ())
    for name in base_steps:
        if name in current_names:
            continue
        if name in declared:
            why = "not selected in this run (--step): not compared"
            rows.append(Subject(name).row("step", "skipped", why))
        else:
            why = "step removed: in the baseline, not in this run's config"
            rows.append(Subject(name).row("step", "removed", why))
    return VerdictReport(
        verdicts=tuple(rows),
        baseline=EnvironmentSummary.from_document(baseline),
        current=EnvironmentSummary.from_document(result),
        notes=tuple(notes),
        paired=pairing.summary(pairs) if pairing is not None else None,
    )


def _compare_step(
    base: Step | None,
    cur: Step,
    env_reason: str | None,
    override: dict[str, float],
    notes: list[str],
    how: How,
) -> list[MetricVerdict]:
    step = Subject(cur.name)
    if cur.failed:
        return [step.row("step", "error", f"step failed: {cur.error or 'unknown error'}")]
    errors = [_variant_error(step.step, v) for v in cur.variants if v.failed]
    ok = [v for v in cur.variants if not v.failed]
    if base is None:
        return errors + _new_rows(step.step, ok, "new step: not in the baseline")
    if env_reason:
        return [*errors, step.row("step", "incomparable", f"not compared: {env_reason}")]
    if base.failed:
        why = (
            "no usable baseline: the baseline run of this step failed "
            f"({base.error or 'unknown error'})"
        )
        return [*errors, step.row("step", "incomparable", why)]
    reason = step_config_mismatch(base, cur)
    if reason:
        return [*errors, step.row("step", "incomparable", f"not compared: {reason}")]
    if not base.settings and not base.config_fingerprint:
        notes.append(
            f"step {step.step}: the baseline records neither settings nor a fingerprint; "
            "its configuration could not be checked"
        )
    policy = StepPolicy.from_baseline(base, override)
    notes.extend(threshold_notes(step.step, base, cur, policy.thresholds))
    if base.eager is None or cur.eager is None:  # the schema gives a step that ran its eager
        raise ValueError(f"step {step.step}: ran without an eager measurement")
    eager = Sides(Subject(step.step, "eager"), base.eager, cur.eager, base, cur, policy, *how)
    rows = [row for judge in EAGER_JUDGES for row in judge(eager)]
    for variant in cur.variants:
        rows.extend(
            _compare_variant(
                Subject(step.step, variant.id),
                base.variant(variant.id),
                variant,
                (base, cur),
                policy,
                how,
            )
        )
    current_ids = {v.id for v in cur.variants}
    for entry in base.variants:
        if entry.id not in current_ids:
            rows.append(
                Subject(step.step, entry.id).row(
                    "variant", "removed", "variant removed: in the baseline, not run now"
                )
            )
    return rows


def _compare_variant(
    subject: Subject,
    base: Variant | None,
    cur: Variant,
    steps: tuple[Step, Step],
    policy: StepPolicy,
    how: How,
) -> list[MetricVerdict]:
    if cur.failed:
        return [_variant_error(subject.step, cur)]
    if base is None:
        return _new_rows(subject.step, [cur], "new variant: not in the baseline")
    if base.failed:
        why = (
            "no usable baseline: the baseline run of this variant failed "
            f"({base.error or 'unknown error'})"
        )
        return [subject.row("variant", "incomparable", why)]
    before, after = base.definition, cur.definition
    if before != after:
        changed = [f"{k} {before[k]!r} → {after[k]!r}" for k in before if before[k] != after[k]]
        why = "not compared: the variant's definition changed: " + ", ".join(changed)
        return [subject.row("variant", "incomparable", why)]
    sides = Sides(subject, base, cur, steps[0], steps[1], policy, *how)
    return [row for judge in VARIANT_JUDGES for row in judge(sides)]


def _variant_error(step: str, variant: Variant) -> MetricVerdict:
    message = f"variant failed: {variant.error or 'unknown error'}"
    return Subject(step, variant.id).row("variant", "error", message)


def _new_rows(step: str, variants: list[Variant], why: str) -> list[MetricVerdict]:
    """One `new` row per variant, carrying its speedup; a step-level row when none ran."""
    if not variants:
        return [Subject(step).row("step", "new", why)]
    return [
        Subject(step, v.id).row(
            "speedup",
            "new",
            why,
            direction=HIGHER_IS_BETTER,
            unit="x",
            current=v.speedup.median if v.speedup is not None else None,
        )
        for v in variants
    ]


def _pairs(baseline: ResultDocument) -> int | None:
    """How many pairs each variant was timed in (the fewest over the steps)."""
    counts = [
        (step.settings or {}).get("variant_processes") for step in baseline.steps if not step.failed
    ]
    pairs = [c for c in counts if isinstance(c, int)]
    return min(pairs) if pairs else None
