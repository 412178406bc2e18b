"""What `compilegate baseline update` did, in one line for the terminal
(gate/baseline.py's BaselineUpdate)."""

from __future__ import annotations

from ..gate.baseline import BaselineUpdate, Incomplete, KeptVariant, NoisyRow
from ..gate.history import MIN_HISTORY_RUNS
from .child_failure_words import error_words
from .health_words import said
from .row_words.comparability import environment_mismatch_words, hardware_class_words
from .wording import speedup_text

_INCOMPLETE = {
    Incomplete.DIAGNOSTICS_FAILED: "its compile diagnostics failed in this run",
    Incomplete.NUMERICS_ERRORED: "its numerics check errored in this run",
    Incomplete.NOT_IN_RESULT: "not in this run's result",
}


def kept_variant_words(kept: KeptVariant) -> str:
    """`step/variant (why)`: "train/a (failed in this run: timed out)"."""
    if kept.why is Incomplete.FAILED:
        error = " ".join((error_words(kept.error, kept.failure) or "unknown error").split())
        why = f"failed in this run: {error[:120]}"
    else:
        why = _INCOMPLETE[kept.why]
    return f"{kept.step}/{kept.variant} ({why})"


def noisy_row_words(row: NoisyRow) -> str:
    """ "a/default: its speedup by each process's fastest iterations (what a pull request's
    speedup row compares: 1.21× over 2 processes) has noise ±94 %, more than twice the 5 %
    threshold; the run's table shows 1.08× (1.04–1.12), by mean step time". The noise and
    the speedup beside it come from the same per-process values; the table's figure is
    named as the other statistic it is, never set against this noise unnamed."""
    values = ""
    if row.value is not None and row.processes:
        plural = "process" if row.processes == 1 else "processes"
        values = f": {row.value:.2f}× over {row.processes} {plural}"
    said = (
        f"{row.step}/{row.variant}: its {row.metric} by each process's fastest iterations "
        f"(what a pull request's {row.metric} row compares{values}) has noise "
        f"±{row.noise_pct:.0f} %, more than twice the {row.threshold_pct:g} % threshold"
    )
    if row.shown is not None:
        shown = speedup_text(row.shown.estimate, row.shown.low, row.shown.high)
        said += f"; the run's table shows {shown}, by mean step time"
    return said


def baseline_update_summary(update: BaselineUpdate) -> str:
    """One line for the terminal."""
    dropped_why = (
        environment_mismatch_words(update.dropped_reason)
        if update.dropped_reason is not None
        else None
    )
    parts = [
        f"{label} ({', '.join(names)})"
        for label, names in (
            (f"{len(update.replaced)} replaced", update.replaced),
            (f"{len(update.added)} added", update.added),
            (f"{len(update.kept)} kept (not run this time)", update.kept),
            (f"{len(update.kept_over_error)} kept (failed in this run)", update.kept_over_error),
            (f"{len(update.dropped)} dropped ({dropped_why})", update.dropped),
            (
                f"{len(update.no_longer_declared)} dropped (no longer in the config)",
                update.no_longer_declared,
            ),
            (
                f"{len(update.variants_kept)} variant(s) kept from the previous baseline",
                tuple(map(kept_variant_words, update.variants_kept)),
            ),
        )
        if names
    ]
    line = f"{update.path}: baseline updated: " + ("; ".join(parts) or "no steps")
    if update.named is not None and update.hardware_class is not None:
        line += (
            f"; the baseline of hardware class {hardware_class_words(update.hardware_class)}, "
            f"kept beside {update.named}, which holds another class's (left as it was)"
        )
    if update.noisy:
        line += (
            "; note: "
            + "; ".join(map(noisy_row_words, update.noisy))
            + ": pull requests judged against this run "
            "read inconclusive there until steadier runs (more variant_processes or "
            "iterations) replace it"
        )
    if update.unsteady_steps:
        why = [said(cause).full for cause in update.unsteady]
        line += (
            f"; recorded {', '.join(update.unsteady_steps)}, but its step times were "
            f"measured on an unsteady machine ({'; '.join(why)}) and will not "
            "judge speed until a steady run of baseline update replaces them (or the "
            f"history holds {MIN_HISTORY_RUNS} steady runs): its counts, graph breaks, "
            "recompiles, numerics, memory and speedups gate as usual; --force vouches "
            "for the times"
        )
    return line
