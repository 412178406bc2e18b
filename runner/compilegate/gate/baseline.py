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

The file is written atomically, so a crash never leaves half a baseline behind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DEFAULT_THRESHOLDS
from ..errors import BaselineError
from ..results.document import write_document
from ..results.model import environment_of, step_of
from .compare import variant_definition
from .documents import read_result_document
from .history import merged_history
from .policy import declared_thresholds, environment_mismatch, step_config_mismatch
from .rules import decides_threshold, is_number


@dataclass(frozen=True)
class BaselineUpdate:
    """What `update_baseline` did, step by step (names in baseline order)."""

    path: Path
    replaced: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    kept_over_error: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    dropped_reason: str | None = None
    no_longer_declared: tuple[str, ...] = ()
    # `step/variant (why)`: a variant whose previous baseline was kept over this run's.
    variants_kept: tuple[str, ...] = ()
    # Recorded, but too noisy to decide a threshold (noisy_rows): what the reader should know.
    noisy: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the terminal."""
        parts = [
            f"{label} ({', '.join(names)})"
            for label, names in (
                (f"{len(self.replaced)} replaced", self.replaced),
                (f"{len(self.added)} added", self.added),
                (f"{len(self.kept)} kept (not run this time)", self.kept),
                (f"{len(self.kept_over_error)} kept (failed in this run)", self.kept_over_error),
                (f"{len(self.dropped)} dropped ({self.dropped_reason})", self.dropped),
                (
                    f"{len(self.no_longer_declared)} dropped (no longer in the config)",
                    self.no_longer_declared,
                ),
                (
                    f"{len(self.variants_kept)} variant(s) kept from the previous baseline",
                    self.variants_kept,
                ),
            )
            if names
        ]
        line = f"{self.path}: baseline updated: " + ("; ".join(parts) or "no steps")
        if self.noisy:
            line += (
                "; note: " + "; ".join(self.noisy) + ": pull requests judged against this run "
                "read inconclusive there until steadier runs (more variant_processes or "
                "iterations) replace it"
            )
        return line


def merge_into_baseline(
    old: Mapping[str, Any] | None, result: Mapping[str, Any], path: Path
) -> tuple[dict[str, Any], BaselineUpdate]:
    """The new baseline document, and what changed; pure (no I/O)."""
    merged = dict(result)
    created_at = result.get("created_at")
    if old is None:
        merged["steps"] = [_with_history(None, step, created_at) for step in result["steps"]]
        added = tuple(step["name"] for step in result["steps"])
        return merged, BaselineUpdate(path=path, added=added)
    env_reason = environment_mismatch(
        environment_of(old.get("environment") or {}), environment_of(result["environment"])
    )
    new_steps = {step["name"]: step for step in result["steps"]}
    steps: list[Mapping[str, Any]] = []
    outcome: dict[str, list[str]] = {k: [] for k in ("replaced", "kept", "kept_over_error")}
    dropped: list[str] = []
    no_longer_declared: list[str] = []
    declared = set(result.get("declared_steps") or ())
    variants_kept: list[str] = []
    for old_step in old.get("steps", []):
        name = old_step["name"]
        new_step = new_steps.pop(name, None)
        if new_step is None and declared and name not in declared:
            no_longer_declared.append(name)
        elif new_step is None and env_reason:
            dropped.append(name)
        elif new_step is None:
            steps.append(old_step)
            outcome["kept"].append(name)
        elif _failed(new_step) and not _failed(old_step) and not env_reason:
            steps.append(old_step)
            outcome["kept_over_error"].append(name)
        elif env_reason:
            steps.append(_with_history(None, new_step, created_at))
            outcome["replaced"].append(name)
        else:
            merged_step, kept_here = merge_variants(old_step, new_step)
            steps.append(_with_history(old_step, merged_step, created_at))
            outcome["replaced"].append(name)
            variants_kept.extend(kept_here)
    # steps new in this result, in its order
    steps.extend(_with_history(None, step, created_at) for step in new_steps.values())
    merged["steps"] = steps
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
    return merged, update


def merge_variants(
    old_step: Mapping[str, Any], new_step: Mapping[str, Any]
) -> tuple[Mapping[str, Any], list[str]]:
    """The new step, with each failed, incomplete or (same declared variants) absent variant
    replaced by its previous complete baseline where that is still a baseline of the same
    thing; and `step/variant (why)` for each one kept. A changed step configuration takes
    the new step as it is."""
    if _failed(old_step) or step_config_mismatch(step_of(old_step), step_of(new_step)):
        return new_step, []
    old_variants = {v["id"]: v for v in old_step.get("variants", [])}
    variants, kept = [], []
    for variant in new_step.get("variants", []):
        previous = old_variants.get(variant["id"])
        why = variant_incomplete(variant)
        if (
            why
            and previous is not None
            and variant_incomplete(previous) is None
            and variant_definition(previous) == variant_definition(variant)
        ):
            variants.append(previous)
            kept.append(f"{new_step['name']}/{variant['id']} ({why})")
        else:
            variants.append(variant)
    same_variants = old_step.get("config_fingerprint") == new_step.get("config_fingerprint")
    if same_variants and old_step.get("config_fingerprint"):
        # Same declared variants, yet one is absent: a run cut short. Keep its baseline.
        ran = {v["id"] for v in variants}
        for vid, previous in old_variants.items():
            if vid not in ran and variant_incomplete(previous) is None:
                variants.append(previous)
                kept.append(f"{new_step['name']}/{vid} (not in this run's result)")
    if not kept:
        return new_step, []
    return {**new_step, "variants": variants}, kept


def variant_incomplete(variant: Mapping[str, Any]) -> str | None:
    """Why a variant's measurement is no full reference, or None when it is one."""
    if variant.get("status") == "error":
        error = " ".join(str(variant.get("error") or "unknown error").split())
        return f"failed in this run: {error[:120]}"
    if any(variant.get(key) is None for key in ("recompiles", "graph_breaks")):
        return "its compile diagnostics failed in this run"
    if (variant.get("numerics") or {}).get("status") == "error":
        return "its numerics check errored in this run"
    return None


# metric family -> (the threshold it is judged by, where a run records the noise it brings).
# Only what a one-run baseline gates: the absolute step times are judged against the
# history's spread between runs, not one run's processes (gate/judges/speed.py), so their
# own process noise does not make a run unfit to join the history (issue 28: the first run
# on an idle H200 was refused for an eager noise of ±11 %).
_GATED_NOISE = (("speedup", "speedup_drop_pct", ("speedup_process_noise_pct",)),)


def unsteady_run(result: Mapping[str, Any]) -> list[str]:
    """Why this result may not join the baseline: its run's own health says its numbers
    support no verdict (results/run_health.py); its history would carry the outlier."""
    return [
        f"the machine was unsteady: {why}"
        for why in (result.get("run_health") or {}).get("unsteady") or []
    ]


def noisy_rows(result: Mapping[str, Any]) -> list[str]:
    """The gated rows whose noise in this run is more than twice their threshold
    (rules.decides_threshold): a pull request judged against this run alone reads
    `inconclusive` there. Said when recording, not refused: on an idle H200 the seed's own
    step brought a speedup noise of ±14 % (issue 28), and a baseline nobody can record gates
    nothing."""
    reasons = []
    for step in result.get("steps") or []:
        if step.get("status") != "ok":
            continue
        thresholds = declared_thresholds(step.get("settings"))
        for label, threshold_name, (key,) in _GATED_NOISE:
            threshold = thresholds.get(threshold_name, DEFAULT_THRESHOLDS[threshold_name])
            for holder in step.get("variants") or []:
                noise = holder.get(key)
                if is_number(noise) and not decides_threshold(noise, threshold):
                    reasons.append(
                        f"{step['name']}/{holder.get('id')}: its {label} noise ±{noise:.0f} % "
                        f"is more than twice the {threshold:g} % threshold"
                    )
    return reasons


def update_baseline(
    result_path: Path | str, baseline_path: Path | str, *, force: bool = False
) -> BaselineUpdate:
    """Merge the result at `result_path` into the baseline at `baseline_path` (atomically).
    A result too noisy to gate its thresholds is refused (BaselineError) unless `force`."""
    baseline_path = Path(baseline_path)
    result = read_result_document(result_path, role="result")
    refused = unsteady_run(result)
    if refused and not force:
        raise BaselineError(
            f"{result_path}: not recorded as a baseline: {'; '.join(refused)}; rerun once "
            "those causes are gone, or pass --force to record it anyway"
        )
    old = None
    if baseline_path.exists():
        old = read_result_document(baseline_path, role="baseline")
    merged, update = merge_into_baseline(old, result, baseline_path)
    update = dataclasses.replace(update, noisy=tuple(noisy_rows(result)))
    try:
        write_document(merged, baseline_path)
    except OSError as exc:
        raise BaselineError(
            f"{baseline_path}: cannot write baseline: {exc.strerror or exc}"
        ) from None
    return update


def _with_history(
    old_step: Mapping[str, Any] | None, new_step: Mapping[str, Any], created_at: str | None
) -> Mapping[str, Any]:
    """`new_step` carrying the default branch's recent runs (gate/history.py), this one
    last; whatever history the result itself carried is not kept."""
    return {**new_step, "history": merged_history(old_step, new_step, created_at)}


def _failed(step: Mapping[str, Any]) -> bool:
    return step.get("status") == "error"
