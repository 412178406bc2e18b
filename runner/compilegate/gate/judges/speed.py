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
from dataclasses import dataclass
from typing import Callable, overload

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
from ...results.stats import MIN_PAIRS, compare_sides
from ...results.yardsticks import tracking_yardstick
from ..history import MIN_HISTORY_RUNS, Prediction, history_values, predict
from ..rules import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    Side,
    classify_speed_change,
    detectable_change_pct,
    ratio_size_pct,
)
from ..verdict import NOISE_FROM_HISTORY, NOISE_FROM_RUNS, MetricVerdict, Verdict
from .sides import RAW, YARDSTICK, Sides
from .speed_facts import (
    Disturbed,
    HistoryFacts,
    NotJudged,
    RawBecause,
    SpeedFacts,
    Statistic,
    Ungated,
)
from .speed_medians import judge_from_medians, judge_speed, ratio_median, speedup_noise_pct

YARDSTICK_UNIT = "yardsticks"  # a step time divided by the yardstick's: no physical unit
# metric -> (unit, direction)
SPEED_METRICS = {
    "speedup": ("x", HIGHER_IS_BETTER),
    "eager_step_ms": ("ms", LOWER_IS_BETTER),
    "compiled_step_ms": ("ms", LOWER_IS_BETTER),
}
Records = tuple[list[Process], list[Process]]
KeyedProcesses = list[tuple[Key, Process]]


@dataclass(frozen=True)
class Units:
    """How a row's values are compared: `normalisation` YARDSTICK (divided by `yardstick`,
    picked from the candidates' `spreads_pct` where there were two), RAW (and why), or None
    for a speedup (a ratio inside one process)."""

    normalisation: str | None = None
    raw_because: RawBecause | None = None
    torch_versions: tuple[str, str] | None = None
    yardstick: str = GPU_BOUND
    spreads_pct: tuple[tuple[str, float], ...] = ()


def judge_eager(sides: Sides) -> list[MetricVerdict]:
    """The step's eager time, over every process of each run that timed eager."""
    records, left_out = undisturbed(sides, eager_records_of(sides))
    threshold = sides.policy.thresholds["eager_step_time_growth_pct"]
    if has_degrees_of_freedom(records):
        units = yardstick_of(sides, records, eager_values, "eager_step", units_of(sides, records))
        per_yardstick = units.normalisation == YARDSTICK
        stick = units.yardstick
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
            units,
            history=history_of(sides, "eager_step", units.normalisation),
            ungated=step_time_gate(sides, "eager_step", units.normalisation),
        )
        return _listed(with_disturbed(row, left_out))
    from_medians = judge_from_medians(sides, "eager_step_ms", threshold)
    return _listed(reported_only(from_medians, step_time_gate(sides, "eager_step", None)))


def judge_variant(sides: Sides) -> list[MetricVerdict]:
    """Speedup and compiled step time of one variant."""
    records, left_out = undisturbed(sides, variant_records_of(sides))
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
        Units(),
        history=history_of(sides, "speedup", None),
    )
    units = yardstick_of(sides, records, compiled_values, "compiled_step", units_of(sides, records))
    normalisation, per_yardstick = units.normalisation, units.normalisation == YARDSTICK
    stick = units.yardstick
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
        units,
        history=history_of(sides, "compiled_step", normalisation),
        ungated=step_time_gate(sides, "compiled_step", normalisation),
    )
    return _listed(with_disturbed(speedup, left_out), with_disturbed(compiled, left_out))


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


def step_time_gate(sides: Sides, family: str, normalisation: str | None) -> Ungated | None:
    """Why an absolute step time of `family` (eager_step, compiled_step, eager_step_p25, …)
    may not fail the job in this comparison, or None where it may (the module's docstring):
    a paired comparison decides on its paired noise; against a stored baseline it takes a
    steady run and a history that predicts one more run."""
    if sides.paired:
        return None
    recorded = max(1, len(_history_values(sides, family, normalisation)))
    if sides.unsteady:
        return Ungated(NotJudged.UNSTEADY_RUN, recorded, MIN_HISTORY_RUNS)
    if history_of(sides, family, normalisation) is not None:
        return None
    if sides.base_step.unsteady_times:
        return Ungated(NotJudged.UNSTEADY_BASELINE, recorded, MIN_HISTORY_RUNS)
    return Ungated(NotJudged.SHORT_HISTORY, recorded, MIN_HISTORY_RUNS)


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


def undisturbed(sides: Sides, records: Records) -> tuple[Records, tuple[Disturbed, ...]]:
    """The records without the processes disturbed while they ran (processes.is_disturbed:
    eager twins far apart), and which were left out (none: empty). One
    such process set the noise of every later verdict against a loaded baseline (±85 %: a
    compiled step 10x slower read inconclusive). Left out only while what stays is still
    judged process by process as all would be (degrees of freedom; in a paired comparison
    MIN_PAIRS pairs where all reached them): else all stay, and the noise shows what
    happened. Leaving two of three pairs out on a busy CI runner once sent a paired row to
    the medians of a single process (a load spike's 71.9 ms read as the compiled step)."""
    kept = keep_records(sides, records, lambda record: not is_disturbed(record))
    left_out = tuple(
        Disturbed(side, ratio)
        for side, side_records in zip((Side.BASELINE, Side.RUN), records)
        for ratio in (twins_ratio(r) for r in side_records)
        if ratio is not None and ratio > DISTURBED_TWINS_RATIO
    )
    if not left_out or not has_degrees_of_freedom(kept):
        return records, ()
    if sides.paired and len(kept[0]) < min(MIN_PAIRS, len(records[0])):
        return records, ()
    return kept, left_out


def with_disturbed(
    row: MetricVerdict | None, left_out: tuple[Disturbed, ...]
) -> MetricVerdict | None:
    """The row saying which disturbed processes were left out (none: as it is)."""
    if row is None or not left_out or not isinstance(row.facts, SpeedFacts):
        return row
    return dataclasses.replace(row, facts=dataclasses.replace(row.facts, disturbed=left_out))


def has_degrees_of_freedom(records: Records) -> bool:
    return bool(records[0]) and bool(records[1]) and len(records[0]) + len(records[1]) > 2


def units_of(sides: Sides, records: Records) -> Units:
    """How these records' step times are compared: raw across torch versions (the yardstick
    runs on torch) or where a process did not time the yardstick, else in its units."""
    if sides.units.normalisation == RAW:
        return Units(RAW, RawBecause.TORCH_VERSIONS, sides.units.torch_versions)
    if not all(all_timed_yardstick(r) for r in records):
        return Units(RAW, RawBecause.YARDSTICK_NOT_TIMED)
    return Units(YARDSTICK)


def yardstick_of(
    sides: Sides, records: Records, values_of: Callable[..., list[float]], family: str, units: Units
) -> Units:
    """`units` naming the yardstick `family`'s step times are divided by: the one its
    processes follow (results/yardsticks.py), with each candidate's spread. The GPU-bound
    one where the row is judged against a history, which stores step times in its units
    (gate/history.py)."""
    choice = tracking_yardstick(records, values_of)
    if units.normalisation != YARDSTICK or history_of(sides, family, YARDSTICK) is not None:
        return units
    return dataclasses.replace(
        units, yardstick=choice.yardstick, spreads_pct=choice.timed_spreads()
    )


def judge_processes(
    sides: Sides,
    metric: str,
    judged: Sequence[Sequence[float]],
    shown: Sequence[Sequence[float]],
    threshold_pct: float,
    units: Units,
    *,
    statistic: Statistic = Statistic.FASTEST,
    history: Prediction | None = None,
    ungated: Ungated | None = None,
) -> MetricVerdict:
    """One row from both runs' per-process values: `judged` in the units compared, `shown`
    in the row's own unit (ms, or x for a speedup). `metric` may name a distribution
    metric (`eager_step_ms_p25`): its family's unit and direction apply.

    With a `history` (the default branch's recent runs), the change is this run's against
    their mean, and the noise their prediction interval (gate/history.py). With `ungated`
    (why the row may not fail the job here: step_time_gate) it is reported, not judged."""
    family = next(name for name in SPEED_METRICS if metric.startswith(name))
    unit, direction = SPEED_METRICS[family]
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
    verdict = Verdict(classify_speed_change(worse_by, threshold_pct, noise, size_pct=size))
    normalisation = units.normalisation
    shown_values = (geometric_mean(shown[0]), geometric_mean(shown[1]))
    raw_ms: tuple[float, float] | None = None
    if normalisation == YARDSTICK:
        # The row's values, change and threshold are all in yardstick units; the
        # milliseconds they came from are in its facts.
        values = judged_values
        unit = YARDSTICK_UNIT
        raw_ms = shown_values
    elif history is not None:
        values = judged_values
    else:
        values = shown_values
    gross_pct = gross_bound_pct(sides, history, ungated, threshold_pct)
    if gross_pct is not None and classify_speed_change(
        worse_by, gross_pct, noise, size_pct=size
    ) == (Verdict.REGRESSION):
        # Against one stored run, a change beyond any drift between whole runs fails.
        verdict, threshold_pct, ungated = Verdict.REGRESSION, gross_pct, None
    else:
        gross_pct = None
    facts = SpeedFacts(
        statistic=statistic,
        rule_verdict=verdict,
        processes=comparison.processes,
        paired=comparison.paired,
        raw_because=units.raw_because,
        torch_versions=units.torch_versions,
        yardstick=units.yardstick if normalisation == YARDSTICK else None,
        yardstick_spreads_pct=units.spreads_pct if normalisation == YARDSTICK else (),
        raw_ms=raw_ms,
        raw_change_pct=raw.change_pct if raw_ms is not None else None,
        history=(
            None
            if history is None
            else HistoryFacts(history.runs, history.spread_pct, history.noise_pct)
        ),
        gross_bound_pct=gross_pct,
    )
    row = sides.subject.measured(
        metric,
        verdict,
        values,
        unit,
        change,
        threshold_pct,
        direction=direction,
        noise_pct=noise,
        detectable_change_pct=detectable_change_pct(noise, threshold_pct),
        normalisation=normalisation,
        noise_source=NOISE_FROM_RUNS if history is None else NOISE_FROM_HISTORY,
        facts=facts,
    )
    return reported_only(row, ungated)


def gross_bound_pct(
    sides: Sides, history: Prediction | None, ungated: Ungated | None, threshold_pct: float
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
def reported_only(row: MetricVerdict, ungated: Ungated | None) -> MetricVerdict: ...
@overload
def reported_only(row: MetricVerdict | None, ungated: Ungated | None) -> MetricVerdict | None: ...
def reported_only(row: MetricVerdict | None, ungated: Ungated | None) -> MetricVerdict | None:
    """The row reported and not judged where step_time_gate says it may not fail the job
    (`ungated`): verdict pass, gated False, its facts saying why; a `missing` row stays as
    it is."""
    if row is None or ungated is None or not isinstance(row.facts, SpeedFacts):
        return row
    return dataclasses.replace(
        row,
        verdict=Verdict.PASS,
        detectable_change_pct=None,
        gated=False,
        facts=dataclasses.replace(row.facts, not_judged=ungated),
    )


def _listed(*rows: MetricVerdict | None) -> list[MetricVerdict]:
    return [row for row in rows if row is not None]
