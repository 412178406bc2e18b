"""Record a new baseline: merge a result into the baseline file, atomically.

`compilegate baseline update` merges a new result into the baseline: the result's steps
replace same-named ones, steps it did not run are kept when its config still declares them
(left out with `--step`) and dropped when it no longer does (deleted from the default
branch's config: kept, every pull request would fail `removed`), and the document level
(environment, created_at, tool, config, declared_steps) is the new result's. Three
exceptions keep the baseline honest:

- steps measured in another environment (device type, GPU model, CPU model) are dropped
  rather than relabelled as measured here;
- a step that failed in the new run does not replace a good baseline of it (a broken run
  is no reference);
- per variant, likewise: a variant that failed in the new run, or came back incomplete
  (its compile diagnostics failed, its numerics check errored), keeps its last complete
  baseline when the step's configuration and the variant's definition are unchanged, and
  so does a variant missing from a run that was cut short (same declared variants). One
  flaky variant on the default branch must not erase what the gate judges it against.

Each step keeps a summary of the default branch's last runs of it (`history`, at most
history.HISTORY_RUNS, newest last): the gate reads their spread as the between-run noise of
the speed rows (gate/history.py). A step kept from an earlier run keeps its history as it
was; a changed configuration starts a new one.

A run whose machine was unsteady (its run_health, results/run_health.py) is recorded, not
refused: what load cannot move — compile-work and step-work counts, graph breaks,
recompiles, numerics, memory, the speedup timed inside each process — gates pull requests
from it as from any run. Only its absolute step times are not vouched for: each of its
steps carries `unsteady_times` (the causes' codes), the speed judges then gate those times only
against a history of steady runs (gate/judges/speed.py, step_time_gate; not even the gross
bound against this one run), and the run does not join that history (gate/history.py).
A steady run replaces the mark with its own times. `--force` vouches for the times: no
mark, and the run joins the history. (Before issue 40 such a run was refused outright,
exit 2, and a busy runner could record no baseline at all.) A step that keeps a variant
of a marked baseline keeps the mark: one of its times came from that run.

The file is written atomically, so a crash never leaves half a baseline behind. It is the
result's hardware class's (gate/class_baselines.py): a result measured on another class than
the named baseline holds goes into that class's own file beside it, leaving the other
class's baseline as it was.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ..config import DEFAULT_THRESHOLDS
from ..errors import BaselineError
from ..results.document import write_document
from ..results.health_causes import mark_of
from ..results.machine import HardwareClass
from ..results.model import (
    ChildFailure,
    NumericsStatus,
    ResultDocument,
    SpeedupEstimate,
    Step,
    Variant,
)
from ..results.processes import geometric_mean, speedup_values, variant_processes
from ..results.run_health import UnsteadyCause, UnsteadyMark, unsteady_causes
from .class_baselines import baseline_to_update, hardware_class_of
from .comparability import EnvironmentMismatch
from .documents import read_document
from .history import merged_history
from .policy import declared_thresholds, environment_mismatch, step_config_mismatch
from .rules import decides_threshold, is_number


class Incomplete(str, Enum):
    """Why a variant's measurement is no full reference (variant_incomplete)."""

    FAILED = "failed"  # failed in this run
    DIAGNOSTICS_FAILED = "diagnostics_failed"  # its graph breaks or recompiles unknown
    NUMERICS_ERRORED = "numerics_errored"  # its numerics check errored
    NOT_IN_RESULT = "not_in_result"  # absent from a run cut short


@dataclass(frozen=True)
class KeptVariant:
    """A variant whose previous baseline was kept over this run's, and why; `error` and
    `failure`: the run's, where it failed."""

    step: str
    variant: str
    why: Incomplete
    error: str | None = None
    failure: ChildFailure | None = None


@dataclass(frozen=True)
class NoisyRow:
    """A gated row whose noise in this run is more than twice its threshold (noisy_rows):
    `metric` names the family (_GATED_NOISE)."""

    step: str
    variant: str
    metric: str
    noise_pct: float
    threshold_pct: float
    # The per-process values the noise is of (each process's fastest-iteration speedup, as
    # a pull request's speedup row compares them): their count and geometric mean; and the
    # speedup the run's table shows (by mean step time: its payoff), to name both apart.
    processes: int = 0
    value: float | None = None
    shown: SpeedupEstimate | None = None


@dataclass(frozen=True)
class BaselineUpdate:
    """What `update_baseline` did, step by step (names in baseline order); in words:
    report/baseline_update_words.py."""

    path: Path
    replaced: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    kept_over_error: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    dropped_reason: EnvironmentMismatch | None = None
    no_longer_declared: tuple[str, ...] = ()
    # The variants whose previous baseline was kept over this run's.
    variants_kept: tuple[KeptVariant, ...] = ()
    # Recorded, but too noisy to decide a threshold (noisy_rows): what the reader should know.
    noisy: tuple[NoisyRow, ...] = ()
    # Recorded from an unsteady run without --force: why its step times are not vouched
    # for (results/run_health.py), and the steps marked (unsteady_times).
    unsteady: tuple[UnsteadyCause, ...] = ()
    unsteady_steps: tuple[str, ...] = ()
    # Written into the result's hardware class's own file (gate/class_baselines.py) instead
    # of the baseline named, which holds another class's: the named file, and the class.
    named: Path | None = None
    hardware_class: HardwareClass | None = None


def merge_into_baseline(
    old: ResultDocument | None, result: ResultDocument, path: Path
) -> tuple[ResultDocument, BaselineUpdate]:
    """The new baseline document, and what changed; pure (no I/O)."""
    created_at = result.created_at
    if old is None:
        steps = tuple(_with_history(None, step, created_at) for step in result.steps)
        added = result.step_names
        return dataclasses.replace(result, steps=steps), BaselineUpdate(path=path, added=added)
    env_reason = environment_mismatch(old.environment, result.environment)
    new_steps = {step.name: step for step in result.steps}
    merged: list[Step] = []
    outcome: dict[str, list[str]] = {k: [] for k in ("replaced", "kept", "kept_over_error")}
    dropped: list[str] = []
    no_longer_declared: list[str] = []
    declared = set(result.declared_steps or ())
    variants_kept: list[KeptVariant] = []
    for old_step in old.steps:
        name = old_step.name
        new_step = new_steps.pop(name, None)
        if new_step is None and declared and name not in declared:
            no_longer_declared.append(name)
        elif new_step is None and env_reason:
            dropped.append(name)
        elif new_step is None:
            merged.append(old_step)
            outcome["kept"].append(name)
        elif new_step.failed and not old_step.failed and not env_reason:
            merged.append(old_step)
            outcome["kept_over_error"].append(name)
        elif env_reason:
            merged.append(_with_history(None, new_step, created_at))
            outcome["replaced"].append(name)
        else:
            merged_step, kept_here = merge_variants(old_step, new_step)
            merged.append(_with_history(old_step, merged_step, created_at))
            outcome["replaced"].append(name)
            variants_kept.extend(kept_here)
    # steps new in this result, in its order
    merged.extend(_with_history(None, step, created_at) for step in new_steps.values())
    update = BaselineUpdate(
        path=path,
        replaced=tuple(outcome["replaced"]),
        added=tuple(new_steps),
        kept=tuple(outcome["kept"]),
        kept_over_error=tuple(outcome["kept_over_error"]),
        dropped=tuple(dropped),
        dropped_reason=env_reason if dropped else None,
        no_longer_declared=tuple(no_longer_declared),
        variants_kept=tuple(variants_kept),
    )
    return dataclasses.replace(result, steps=tuple(merged)), update


def merge_variants(old_step: Step, new_step: Step) -> tuple[Step, list[KeptVariant]]:
    """The new step, with each failed, incomplete or (same declared variants) absent variant
    replaced by its previous complete baseline where that is still a baseline of the same
    thing; and each one kept, with why. A changed step configuration takes the new step as
    it is."""
    if old_step.failed or step_config_mismatch(old_step, new_step):
        return new_step, []
    variants: list[Variant] = []
    kept: list[KeptVariant] = []
    for variant in new_step.variants:
        previous = old_step.variant(variant.id)
        why = variant_incomplete(variant)
        if (
            why
            and previous is not None
            and variant_incomplete(previous) is None
            and previous.definition == variant.definition
        ):
            variants.append(previous)
            failed = why is Incomplete.FAILED
            error, failure = (variant.error, variant.failure) if failed else (None, None)
            kept.append(KeptVariant(new_step.name, variant.id, why, error, failure))
        else:
            variants.append(variant)
    if old_step.config_fingerprint and old_step.config_fingerprint == new_step.config_fingerprint:
        # Same declared variants, yet one is absent: a run cut short. Keep its baseline.
        ran = {v.id for v in variants}
        for previous in old_step.variants:
            if previous.id not in ran and variant_incomplete(previous) is None:
                variants.append(previous)
                kept.append(KeptVariant(new_step.name, previous.id, Incomplete.NOT_IN_RESULT))
    if not kept:
        return new_step, []
    merged = dataclasses.replace(new_step, variants=tuple(variants))
    if old_step.unsteady_times and not new_step.unsteady_times:
        # a time kept from a run nobody vouched for is still not vouched for
        merged = dataclasses.replace(merged, unsteady_times=old_step.unsteady_times)
    return merged, kept


def variant_incomplete(variant: Variant) -> Incomplete | None:
    """Why a variant's measurement is no full reference, or None when it is one."""
    if variant.failed:
        return Incomplete.FAILED
    if variant.recompiles is None or variant.graph_breaks is None:
        return Incomplete.DIAGNOSTICS_FAILED
    if variant.numerics is not None and variant.numerics.status is NumericsStatus.ERROR:
        return Incomplete.NUMERICS_ERRORED
    return None


# metric family -> (the threshold it is judged by, where a run records the noise it brings).
# Only what a one-run baseline gates: the absolute step times are judged against the
# history's spread between runs, not one run's processes (gate/judges/speed.py), so their
# own process noise does not make a run unfit to join the history (issue 28: the first run
# on an idle H200 was refused for an eager noise of ±11 %).
_GATED_NOISE = (("speedup", "speedup_drop_pct", "speedup_process_noise_pct"),)


def unsteady_times(result: ResultDocument) -> tuple[UnsteadyMark, ...]:
    """Why this result's step times are not to be vouched for, for the baseline's steps to
    carry: the code of each cause of its run_health (results/run_health.py; a sentence an
    older result recorded without the numbers behind it stays that sentence); empty when it
    was steady."""
    if result.run_health is None:
        return ()
    return tuple(mark_of(cause) for cause in unsteady_causes(result.run_health))


def with_times_vouched(result: ResultDocument, force: bool) -> ResultDocument:
    """The result with each measured step's `unsteady_times` set from its run's health
    (None when steady, or when `force` vouches for the times); whatever mark the document
    itself carried is not kept."""
    reasons = () if force else unsteady_times(result)
    steps = tuple(
        dataclasses.replace(step, unsteady_times=reasons if reasons and not step.failed else None)
        for step in result.steps
    )
    return dataclasses.replace(result, steps=steps)


def noisy_rows(result: ResultDocument) -> list[NoisyRow]:
    """The gated rows whose noise in this run is more than twice their threshold
    (rules.decides_threshold): a pull request judged against this run alone reads
    `inconclusive` there. Said when recording, not refused: on an idle H200 the seed's own
    step brought a speedup noise of ±14 % (issue 28), and a baseline nobody can record gates
    nothing."""
    reasons: list[NoisyRow] = []
    for step in result.steps:
        if step.failed:
            continue
        thresholds = declared_thresholds(step.settings)
        for label, threshold_name, attribute in _GATED_NOISE:
            threshold = thresholds.get(threshold_name, DEFAULT_THRESHOLDS[threshold_name])
            for variant in step.variants:
                noise = getattr(variant, attribute)
                if is_number(noise) and not decides_threshold(noise, threshold):
                    values = [v for v in speedup_values(variant_processes(variant)) if v > 0]
                    payoff = variant.payoff
                    reasons.append(
                        NoisyRow(
                            step.name,
                            variant.id,
                            label,
                            noise,
                            threshold,
                            processes=len(values),
                            value=geometric_mean(values) if values else None,
                            shown=payoff.speedup if payoff is not None else None,
                        )
                    )
    return reasons


def update_baseline(
    result_path: Path | str, baseline_path: Path | str, *, force: bool = False
) -> BaselineUpdate:
    """Merge the result at `result_path` into the baseline at `baseline_path` (atomically).
    A result from an unsteady machine is recorded with its step times marked as not
    vouched for (the module's docstring), unless `force` vouches for them."""
    named = Path(baseline_path)
    result = with_times_vouched(read_document(result_path, role="result"), force)
    baseline_path = baseline_to_update(named, result)
    old = None
    if baseline_path.exists():
        old = read_document(baseline_path, role="baseline")
    merged, update = merge_into_baseline(old, result, baseline_path)
    recorded = {*update.replaced, *update.added}
    marked = [s.name for s in result.steps if s.unsteady_times and s.name in recorded]
    update = dataclasses.replace(
        update,
        noisy=tuple(noisy_rows(result)),
        unsteady=unsteady_causes(result.run_health) if marked and result.run_health else (),
        unsteady_steps=tuple(marked),
    )
    if baseline_path != named:
        update = dataclasses.replace(update, named=named, hardware_class=hardware_class_of(result))
    try:
        write_document(merged.to_json(), baseline_path)
    except OSError as exc:
        raise BaselineError(
            f"{baseline_path}: cannot write baseline: {exc.strerror or exc}"
        ) from None
    return update


def _with_history(old_step: Step | None, new_step: Step, created_at: str | None) -> Step:
    """`new_step` carrying the default branch's recent runs (gate/history.py), this one
    last; whatever history the result itself carried is not kept."""
    return dataclasses.replace(new_step, history=merged_history(old_step, new_step, created_at))
