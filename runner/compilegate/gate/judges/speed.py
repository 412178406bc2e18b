"""Speed: eager step time, compiled step time and speedup, on each process's fastest iteration.

Each run times the step in several processes (results/processes.py): eager references, and
every variant's own processes. A metric's value per process is its fastest iteration
(stats.fastest; a speedup is eager / compiled of the same process), and the two runs are
compared with a two-sample t interval over their processes (stats.compare_processes):
the change of the geometric mean, judged by the noise rule (gate/rules.py) against the
95 % half-width from both runs' pooled spread. A process's own luck and what the machine
did while it ran are in that spread; the baseline's processes add degrees of freedom.

Step times are in yardstick units or raw milliseconds (sides.SpeedUnits); a speedup is a
ratio inside one process and needs no yardstick. Runs without process records (results
written before them), or with one process on each side (no degrees of freedom), are judged
on medians and the noise estimates each run made (speed_medians.py).

An absolute step time (eager, compiled, and the quantiles of distribution.py) against a
stored baseline is a comparison of two whole runs, and one run's processes know nothing of
how far whole runs of the machine land apart: on an idle H200 a launch-bound step's
same-commit rerun landed +16 % off against a ±8 % noise from the processes
(shared/reference/gpu-runs/2026-12-04), on the 2-core CPU runner 3 of 10 same-commit runs
failed against one stored run. So such a row may fail the job only where that is known —
a history of MIN_HISTORY_RUNS default-branch runs (gate/history.py), or a paired run (both
sides on one machine at once) — and never on a run whose own health says its numbers
support no verdict (results/run_health.py). A baseline step recorded from an unsteady run
(`unsteady_times`, gate/baseline.py) vouches for none of its times: they are judged only
against its history of steady runs, never against that one run, not even by the gross
bound. Elsewhere it is reported, not gated, saying what it would take (`step_time_gate`).
The speedup is a ratio inside one process and gates from the first run.

How the rest of each process's samples moved (a regression on most iterations that leaves
the fastest alone) is judged in distribution.py, with the same machinery (`judge_processes`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Callable, overload

from ...results.formats import format_value
from ...results.model import Process
from ...results.processes import (
    DISTURBED_TWINS_RATIO,
    GPU_BOUND,
    Key,
    all_timed_yardstick,
    compiled_values,
    eager_values,
    geometric_mean,
    is_disturbed,
    keyed_step_processes,
    keyed_variant_processes,
    paired_records,
    speedup_values,
    twins_ratio,
    within_process,
)
from ...results.stats import ProcessComparison, compare_sides
from ...results.yardsticks import tracking_yardstick
from ..history import HISTORY_RUNS, MIN_HISTORY_RUNS, Prediction, history_values, predict
from ..rules import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    classify_speed_change,
    detectable_change_pct,
    noise_rule_message,
    ratio_size_pct,
)
from ..verdict import NOISE_FROM_HISTORY, NOISE_FROM_RUNS, MetricVerdict, Verdict
from .sides import RAW, YARDSTICK, Sides
from .speed_medians import judge_from_medians, judge_speed, ratio_median, speedup_noise_pct

YARDSTICK_UNIT = "yardsticks"  # a step time divided by the yardstick's: no physical unit
YARDSTICK_UNITS = "in units of the yardstick timed beside them"
# metric -> (label, unit, direction)
SPEED_METRICS = {
    "speedup": ("speedup", "x", HIGHER_IS_BETTER),
    "eager_step_ms": ("eager step time", "ms", LOWER_IS_BETTER),
    "compiled_step_ms": ("compiled step time", "ms", LOWER_IS_BETTER),
}
Records = tuple[list[Process], list[Process]]
KeyedProcesses = list[tuple[Key, Process]]


def judge_eager(sides: Sides) -> list[MetricVerdict]:
    """The step's eager time, over every process of each run that timed eager."""
    records, note = undisturbed(sides, eager_records_of(sides))
    threshold = sides.policy.thresholds["eager_step_time_growth_pct"]
    if has_degrees_of_freedom(records):
        normalisation, units = units_of(sides, records)
        per_yardstick = normalisation == YARDSTICK
        stick, units = yardstick_of(sides, records, eager_values, "eager_step", units)
        row = judge_processes(
            sides,
            "eager_step_ms",
            _paired(
                sides,
                records,
                [eager_values(r, per_yardstick=per_yardstick, yardstick=stick) for r in records],
                "eager",
            ),
            _paired(
                sides, records, [eager_values(r, per_yardstick=False) for r in records], "eager"
            ),
            threshold,
            (normalisation, units),
            history=history_of(sides, "eager_step", normalisation),
            ungated=step_time_gate(sides, "eager_step", normalisation),
        )
        return _listed(with_note(row, note))
    from_medians = judge_from_medians(sides, "eager_step_ms", threshold)
    return _listed(reported_only(from_medians, step_time_gate(sides, "eager_step", None)))


def judge_variant(sides: Sides) -> list[MetricVerdict]:
    """Speedup and compiled step time of one variant."""
    records, note = undisturbed(sides, variant_records_of(sides))
    thresholds = sides.policy.thresholds
    if not has_degrees_of_freedom(records):
        base, head = sides.variants
        speedup = judge_speed(
            sides.subject,
            "speedup",
            ratio_median(base.speedup),
            ratio_median(head.speedup),
            thresholds["speedup_drop_pct"],
            (speedup_noise_pct(base), speedup_noise_pct(head)),
        )
        compiled = judge_from_medians(
            sides, "compiled_step_ms", thresholds["compiled_step_time_growth_pct"]
        )
        return _listed(
            speedup, reported_only(compiled, step_time_gate(sides, "compiled_step", None))
        )
    speedups = _paired(sides, records, [speedup_values(r) for r in records], "speedup")
    speedup = judge_processes(
        sides,
        "speedup",
        speedups,
        speedups,
        thresholds["speedup_drop_pct"],
        (None, ""),
        history=history_of(sides, "speedup", None),
    )
    normalisation, units = units_of(sides, records)
    per_yardstick = normalisation == YARDSTICK
    stick, units = yardstick_of(sides, records, compiled_values, "compiled_step", units)
    compiled = judge_processes(
        sides,
        "compiled_step_ms",
        _paired(
            sides,
            records,
            [compiled_values(r, per_yardstick=per_yardstick, yardstick=stick) for r in records],
            "compiled",
        ),
        _paired(
            sides, records, [compiled_values(r, per_yardstick=False) for r in records], "compiled"
        ),
        thresholds["compiled_step_time_growth_pct"],
        (normalisation, units),
        history=history_of(sides, "compiled_step", normalisation),
        ungated=step_time_gate(sides, "compiled_step", normalisation),
    )
    return _listed(with_note(speedup, note), with_note(compiled, note))


def history_of(sides: Sides, family: str, normalisation: str | None) -> Prediction | None:
    """Where the default branch's recent runs predict one more run of this row lands, in
    the units it is judged in (gate/history.py); None in a paired comparison (both sides
    measured here, side by side) or with too short a history."""
    if sides.paired:
        return None
    return predict(_history_values(sides, family, normalisation))


def _history_values(sides: Sides, family: str, normalisation: str | None) -> list[float]:
    if normalisation is None:
        key = family
    else:
        key = f"{family}_yardsticks" if normalisation == YARDSTICK else f"{family}_ms"
    return history_values(sides.base_step, sides.subject.variant, key)


def step_time_gate(sides: Sides, family: str, normalisation: str | None) -> str | None:
    """Why an absolute step time of `family` (eager_step, compiled_step, eager_step_p25, …)
    may not fail the job in this comparison, or None where it may (the module's docstring):
    a paired comparison decides on its paired noise; against a stored baseline it takes a
    steady run and a history that predicts one more run."""
    if sides.paired:
        return None
    if sides.unsteady:
        return (
            "this run's machine was unsteady (run health), so its step times support no "
            "verdict; rerun once the causes are gone, or in paired mode (run --against)"
        )
    if history_of(sides, family, normalisation) is not None:
        return None
    if sides.base_step.unsteady_times:
        return (
            "the baseline's step times were measured on an unsteady machine (its run health "
            "when baseline update recorded it) and are not vouched for; they are judged once "
            "a steady run of baseline update replaces them, or its history holds "
            f"{MIN_HISTORY_RUNS} steady runs, or now in paired mode (run --against)"
        )
    recorded = max(1, len(_history_values(sides, family, normalisation)))
    return (
        f"{recorded} of {MIN_HISTORY_RUNS} default-branch runs recorded; absolute step times "
        f"are judged once the baseline's history ({MIN_HISTORY_RUNS} runs of baseline update) "
        "shows how far whole runs of this machine differ, or now in paired mode (run --against)"
    )


# -- shared with distribution.py --------------------------------------------------------------


def _paired(
    sides: Sides, records: Records, values: Sequence[Sequence[float]], kind: str
) -> list[Sequence[float]]:
    """In a paired comparison, the pairs measured in one process are judged on the ratio
    measured inside it (processes.within_process); the base's values stay."""
    if not sides.paired:
        return list(values)
    return [values[0], within_process(values[0], values[1], records[1], kind)]


def eager_records_of(sides: Sides) -> Records:
    """Each run's processes that timed eager; in a paired comparison, the pairs (the same
    process of both sides, in the same order)."""
    keyed = (keyed_step_processes(sides.base_step), keyed_step_processes(sides.head_step))
    return _records(sides, keyed)


def variant_records_of(sides: Sides) -> Records:
    base, head = sides.variants
    keyed = (keyed_variant_processes(base), keyed_variant_processes(head))
    return _records(sides, keyed)


def keep_records(sides: Sides, records: Records, keep: Callable[[Process], bool]) -> Records:
    """The records `keep` accepts; in a paired comparison a pair stays only whole."""
    if sides.paired:
        pairs = [(b, h) for b, h in zip(*records) if keep(b) and keep(h)]
        return [b for b, _ in pairs], [h for _, h in pairs]
    return [r for r in records[0] if keep(r)], [r for r in records[1] if keep(r)]


def _records(sides: Sides, keyed: tuple[KeyedProcesses, KeyedProcesses]) -> Records:
    if sides.paired:
        return paired_records(*keyed)
    return [r for _, r in keyed[0]], [r for _, r in keyed[1]]


def undisturbed(sides: Sides, records: Records) -> tuple[Records, str]:
    """The records without the processes disturbed while they ran (processes.is_disturbed:
    eager twins far apart), and the words that say which were left out ("" when none). One
    such process set the noise of every later verdict against a loaded baseline (±85 %: a
    compiled step 10x slower read inconclusive). Left out only while each side keeps a
    process: else all stay, and the noise shows what happened."""
    kept = keep_records(sides, records, lambda record: not is_disturbed(record))
    left_out = [
        (side, ratio)
        for side, side_records in zip(("baseline", "this run"), records)
        for ratio in (twins_ratio(r) for r in side_records)
        if ratio is not None and ratio > DISTURBED_TWINS_RATIO
    ]
    if not left_out or not kept[0] or not kept[1]:
        return records, ""
    said = ", ".join(f"{side}'s eager twins x{ratio:.1f} apart" for side, ratio in left_out)
    count = len(left_out)
    return kept, (
        f"; {count} disturbed process{'es' if count > 1 else ''} left out ({said}: "
        f"more than x{DISTURBED_TWINS_RATIO:g}, a load spike inside the process)"
    )


def with_note(row: MetricVerdict | None, note: str) -> MetricVerdict | None:
    """The row with `note` appended to its message (none: as it is)."""
    if row is None or not note:
        return row
    return dataclasses.replace(row, message=row.message + note)


def has_degrees_of_freedom(records: Records) -> bool:
    return bool(records[0]) and bool(records[1]) and len(records[0]) + len(records[1]) > 2


def units_of(sides: Sides, records: Records) -> tuple[str, str]:
    """(the normalisation, how the message says it)."""
    if sides.units.normalisation == RAW:
        return RAW, f"raw milliseconds ({sides.units.why_raw})"
    if not all(all_timed_yardstick(r) for r in records):
        return RAW, "raw milliseconds (a run did not time the yardstick)"
    return YARDSTICK, YARDSTICK_UNITS


def yardstick_of(
    sides: Sides, records: Records, values_of: Callable[..., list[float]], family: str, units: str
) -> tuple[str, str]:
    """(the yardstick `family`'s step times are divided by, how the message says it): the
    one its processes follow (results/yardsticks.py). The GPU-bound one where the row is
    judged against a history, which stores step times in its units (gate/history.py)."""
    choice = tracking_yardstick(records, values_of)
    if units != YARDSTICK_UNITS or history_of(sides, family, YARDSTICK) is not None:
        return GPU_BOUND, units
    return choice.yardstick, choice.describe()


def judge_processes(
    sides: Sides,
    metric: str,
    judged: Sequence[Sequence[float]],
    shown: Sequence[Sequence[float]],
    threshold_pct: float,
    units: tuple[str | None, str],
    *,
    label: str | None = None,
    statistic: str = "fastest iterations",
    history: Prediction | None = None,
    ungated: str | None = None,
) -> MetricVerdict:
    """One row from both runs' per-process values: `judged` in the units compared, `shown`
    in the row's own unit (ms, or x for a speedup). `metric` may name a distribution
    metric (`eager_step_ms_median`): its family's label, unit and direction apply.

    With a `history` (the default branch's recent runs), the change is this run's against
    their mean, and the noise their prediction interval (gate/history.py). With `ungated`
    (why the row may not fail the job here: step_time_gate) it is reported, not judged."""
    family = next(name for name in SPEED_METRICS if metric.startswith(name))
    family_label, unit, direction = SPEED_METRICS[family]
    label = label or family_label
    comparison = compare_sides(judged[0], judged[1], paired=sides.paired)
    raw = compare_sides(shown[0], shown[1], paired=sides.paired)
    change = comparison.change_pct
    noise = comparison.noise_pct
    assert noise is not None  # has_degrees_of_freedom
    judged_values = (geometric_mean(judged[0]), geometric_mean(judged[1]))
    if history is not None:
        change = history.change_pct(judged_values[1])
        noise = history.noise_pct
        judged_values = (history.mean, judged_values[1])
    worse_by = -change if direction == HIGHER_IS_BETTER else change
    size = ratio_size_pct(change)
    verdict = classify_speed_change(worse_by, threshold_pct, noise, size_pct=size)
    normalisation, units_text = units
    shown_values = (geometric_mean(shown[0]), geometric_mean(shown[1]))
    unit_text = f", {units_text}" if units_text else ""
    if history is not None:
        unit_text += (
            f"; against the mean of the default branch's last {history.runs} runs, whose "
            f"spread (±{history.spread_pct:.1f} % a run) predicts ±{history.noise_pct:.1f} % "
            f"for one more"
        )
    if normalisation == YARDSTICK:
        # The row's values, change and threshold are all in yardstick units; the
        # milliseconds they came from are in the message.
        values = judged_values
        unit = YARDSTICK_UNIT
        unit_text += (
            f"; raw {format_value(shown_values[0], 'ms')} → "
            f"{format_value(shown_values[1], 'ms')}, {raw.change_pct:+.1f} %"
        )
    elif history is not None:
        values = judged_values
    else:
        values = shown_values
    moved = (
        f"{label} {format_value(values[0], unit)} → {format_value(values[1], unit)} "
        f"({change:+.1f} %; {_what(comparison, statistic)}{unit_text})"
    )
    where = (
        _noise_source(comparison)
        if history is None
        else f"between the default branch's last {history.runs} runs"
    )
    gross_pct = gross_bound_pct(sides, history, ungated, threshold_pct)
    if gross_pct is not None and classify_speed_change(
        worse_by, gross_pct, noise, size_pct=size
    ) == ("regression"):
        # Against one stored run, a change beyond any drift between whole runs fails.
        verdict, threshold_pct, ungated = "regression", gross_pct, None
        where += (
            f"; against one stored run a step time fails only beyond the {gross_pct:g} % "
            "that whole runs of one machine were measured to drift apart "
            "(step_time_gross_growth_pct)"
        )
    message = noise_rule_message(moved, verdict, change, threshold_pct, noise, where)
    if verdict == "inconclusive":
        message += how_to_decide(history)
    row = sides.subject.measured(
        metric,
        verdict,
        message,
        values,
        unit,
        change,
        threshold_pct,
        direction=direction,
        noise_pct=noise,
        detectable_change_pct=detectable_change_pct(noise, threshold_pct),
        normalisation=normalisation,
        noise_source=NOISE_FROM_RUNS if history is None else NOISE_FROM_HISTORY,
    )
    return reported_only(row, ungated, moved)


def gross_bound_pct(
    sides: Sides, history: Prediction | None, ungated: str | None, threshold_pct: float
) -> float | None:
    """The bound a step time is judged against where no history judges it yet (one stored
    run, a steady run, not paired): `step_time_gross_growth_pct`, above the drift measured
    between whole runs of unchanged code (the 2-core CPU's 25th percentile up to 18 %, the
    H200's fastest iterations +26 %, hosted runners 26 % between jobs), so a step most of
    whose iterations got 1.5x slower fails from the first run; never below the row's own
    threshold. None elsewhere: the row is judged on its history or paired noise, or only
    reported (an unsteady run, or a baseline recorded from one: its one run's times are no
    reference for any bound)."""
    if ungated is None or history is not None or sides.paired or sides.unsteady:
        return None
    if sides.base_step.unsteady_times:
        return None
    return max(sides.policy.thresholds["step_time_gross_growth_pct"], threshold_pct)


@overload
def reported_only(
    row: MetricVerdict, ungated: str | None, moved: str | None = None
) -> MetricVerdict: ...
@overload
def reported_only(
    row: MetricVerdict | None, ungated: str | None, moved: str | None = None
) -> MetricVerdict | None: ...
def reported_only(
    row: MetricVerdict | None, ungated: str | None, moved: str | None = None
) -> MetricVerdict | None:
    """The row reported and not judged where step_time_gate says it may not fail the job
    (`ungated`): verdict pass, gated False, its message what moved (`moved`, else its own)
    and why it is not judged; a `missing` row stays as it is."""
    if row is None or ungated is None or row.verdict == "missing":
        return row
    return dataclasses.replace(
        row,
        verdict=Verdict.PASS,
        message=f"{moved or row.message}; reported, not judged: {ungated}",
        detectable_change_pct=None,
        gated=False,
    )


def how_to_decide(history: Prediction | None) -> str:
    """What narrows an inconclusive row's noise. Against a history the noise is the default
    branch's spread from run to run, which a rerun of this run leaves as it is."""
    if history is None:
        return "; rerun with more processes (variant_processes) or iterations to decide"
    more = ""
    if history.runs < HISTORY_RUNS:
        more = f", or more of them (the baseline keeps {HISTORY_RUNS}, it has {history.runs})"
    return (
        "; to decide it, narrow the default branch's spread, which a rerun of this run leaves "
        "as it is: steadier default-branch runs (more iterations or processes in the base "
        f"branch's config){more}"
    )


def _what(comparison: ProcessComparison, statistic: str) -> str:
    n_base, n_cur = comparison.processes
    if comparison.paired:
        return f"{statistic}, {n_base} pairs of processes"
    return f"{statistic}, {n_base} processes → {n_cur}"


def _noise_source(comparison: ProcessComparison) -> str:
    if comparison.paired:
        return "of the paired differences (each head process against the base process beside it)"
    return "between the processes of both runs"


def _listed(*rows: MetricVerdict | None) -> list[MetricVerdict]:
    return [row for row in rows if row is not None]
