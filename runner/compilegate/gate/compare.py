"""Compare a result document with its baseline: a verdict per step × variant × metric.

One pass: for each step, the policy is read from the baseline's side once
(policy.StepPolicy), then every judge of judges/ gets the baseline's and this run's
documents of its subject (judges.Sides) and returns its rows: the eager judges once per
step, the variant judges once per variant present on both sides. How a metric is judged
lives in its judge; this module decides what is compared with what, and what is not:

- Hardware class (results/machine.py, policy.environment_mismatch): against a baseline of
  another class (device type, GPU model or count; on CPU the CPU model or cores) each step
  is judged only on the metrics hardware does not move (hardware_reach.py: graph breaks,
  recompiles, fallbacks, numerics; step and compile work on the same device type), and
  one `incomparable` row per step says the rest — speed, step times, compile seconds,
  memory — is another class's and not judged (comparability.OtherClassFacts).
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

Its own rows (a whole step or variant) carry facts (comparability.py) and the report's
notes are values (notes.py): every word of them is report/'s.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..results.machine import MachineFingerprint
from ..results.model import ResultDocument, Step, Variant
from ..results.run_health import UnsteadyCause, unsteady_causes
from .comparability import (
    AddedFacts,
    BaselineFailedFacts,
    ConfigChangedFacts,
    DefinitionChangedFacts,
    EnvironmentMismatch,
    OtherClassFacts,
    RemovedFacts,
    RunFailedFacts,
    Scope,
    SettingChange,
    SkippedFacts,
)
from .hardware_reach import judged_across_classes
from .judges import EAGER_JUDGES, VARIANT_JUDGES, Sides, SpeedUnits
from .notes import (
    CommandLineThresholdsNote,
    Note,
    OtherClassNote,
    PairedNote,
    ProbeOverruledNote,
    UncheckedConfigNote,
)
from .pairing import Pairing
from .policy import (
    StepPolicy,
    environment_mismatch,
    environment_notes,
    step_config_mismatch,
    threshold_notes,
    validate_threshold_override,
)
from .row_facts import RowFacts
from .rules import HIGHER_IS_BETTER, Subject
from .verdict import EnvironmentSummary, MetricVerdict, Verdict, VerdictReport

How = tuple[SpeedUnits, "Pairing | None", tuple[UnsteadyCause, ...]]


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
    notes: list[Note] = []
    pairing = Pairing.between(baseline, result)
    pairs = _pairs(baseline)
    if pairing is not None:
        notes.append(PairedNote(pairing, pairs))
    other_class = _other_class(baseline, result)
    if other_class is not None:
        facts = other_class
        notes.append(
            OtherClassNote(
                facts.mismatch, facts.baseline_class, facts.current_class, facts.same_device_type
            )
        )
    if cur_env.probe_overruled:
        notes.append(ProbeOverruledNote(cur_env.probe_overruled))
    notes.extend(environment_notes(base_env, cur_env))
    if override:
        notes.append(CommandLineThresholdsNote(tuple(override.items())))
    units = SpeedUnits.between(baseline, result)
    unsteady = unsteady_causes(result.run_health) if result.run_health is not None else ()
    how = (units, pairing, unsteady)
    base_steps = {step.name: step for step in baseline.steps}
    rows: list[MetricVerdict] = []
    for cur in result.steps:
        base = base_steps.get(cur.name)
        rows.extend(_compare_step(base, cur, other_class, override, notes, how))
    current_names = set(result.step_names)
    declared = set(result.declared_steps or ())
    for name in base_steps:
        if name in current_names:
            continue
        if name in declared:
            rows.append(Subject(name).row("step", Verdict.SKIPPED, facts=SkippedFacts()))
        else:
            removed = RemovedFacts(Scope.STEP)
            rows.append(Subject(name).row("step", Verdict.REMOVED, facts=removed))
    return VerdictReport(
        verdicts=tuple(rows),
        baseline=EnvironmentSummary.from_document(baseline),
        current=EnvironmentSummary.from_document(result),
        notes=tuple(notes),
        paired=PairedNote(pairing, pairs) if pairing is not None else None,
    )


def _other_class(baseline: ResultDocument, result: ResultDocument) -> OtherClassFacts | None:
    """The facts of a baseline from another hardware class, or None: one class."""
    mismatch: EnvironmentMismatch | None = environment_mismatch(
        baseline.environment, result.environment
    )
    if mismatch is None:
        return None
    base, cur = MachineFingerprint.of(baseline), MachineFingerprint.of(result)
    return OtherClassFacts(
        mismatch,
        base.hardware_class,
        cur.hardware_class,
        same_device_type=base.device == cur.device,
    )


def _compare_step(
    base: Step | None,
    cur: Step,
    other_class: OtherClassFacts | None,
    override: dict[str, float],
    notes: list[Note],
    how: How,
) -> list[MetricVerdict]:
    step = Subject(cur.name)
    if cur.failed:
        return [
            step.row(
                "step", Verdict.ERROR, facts=RunFailedFacts(Scope.STEP, cur.error, cur.failure)
            )
        ]
    errors = [_variant_error(step.step, v) for v in cur.variants if v.failed]
    ok = [v for v in cur.variants if not v.failed]
    if base is None:
        return errors + _new_rows(step.step, ok, Scope.STEP)
    if base.failed:
        facts: RowFacts = BaselineFailedFacts(Scope.STEP, base.error, base.failure)
        return [*errors, step.row("step", Verdict.INCOMPARABLE, facts=facts)]
    other_type = other_class is not None and not other_class.same_device_type
    reason = step_config_mismatch(base, cur, other_device_type=other_type)
    if reason:
        facts = ConfigChangedFacts(reason)
        return [*errors, step.row("step", Verdict.INCOMPARABLE, facts=facts)]
    if not base.settings and not base.config_fingerprint:
        notes.append(UncheckedConfigNote(step.step))
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
            removed = RemovedFacts(Scope.VARIANT)
            rows.append(Subject(step.step, entry.id).row("variant", Verdict.REMOVED, facts=removed))
    if other_class is None:
        return rows
    same_type = other_class.same_device_type
    judged = [row for row in rows if _whole(row) or judged_across_classes(row.metric, same_type)]
    return [*judged, step.row("step", Verdict.INCOMPARABLE, facts=other_class)]


def _whole(row: MetricVerdict) -> bool:
    """A row about a whole variant (failed, new, removed, changed): kept on any machine."""
    return row.metric in ("step", "variant") or isinstance(row.facts, AddedFacts)


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
        return _new_rows(subject.step, [cur], Scope.VARIANT)
    if base.failed:
        failed = BaselineFailedFacts(Scope.VARIANT, base.error, base.failure)
        return [subject.row("variant", Verdict.INCOMPARABLE, facts=failed)]
    before, after = base.definition, cur.definition
    if before != after:
        changed = tuple(
            SettingChange(k, before[k], after[k]) for k in before if before[k] != after[k]
        )
        facts = DefinitionChangedFacts(changed)
        return [subject.row("variant", Verdict.INCOMPARABLE, facts=facts)]
    sides = Sides(subject, base, cur, steps[0], steps[1], policy, *how)
    return [row for judge in VARIANT_JUDGES for row in judge(sides)]


def _variant_error(step: str, variant: Variant) -> MetricVerdict:
    facts = RunFailedFacts(Scope.VARIANT, variant.error, variant.failure)
    return Subject(step, variant.id).row("variant", Verdict.ERROR, facts=facts)


def _new_rows(step: str, variants: list[Variant], new: Scope) -> list[MetricVerdict]:
    """One `new` row per variant, carrying its speedup; a step-level row when none ran.
    `new`: whether the step or the variant is what the baseline lacks."""
    if not variants:
        return [Subject(step).row("step", Verdict.NEW, facts=AddedFacts(new))]
    return [
        Subject(step, v.id).row(
            "speedup",
            Verdict.NEW,
            facts=AddedFacts(new),
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
