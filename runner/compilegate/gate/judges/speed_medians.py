"""Speed for results without per-process records (written before them), or with one process
a side: medians, and the noise each run measured of itself.

For one run and metric the noise is the largest of the estimates the run offers (95 %
half-widths, percent):

    speedup           the speedup CI half-width, noise_pct (A/A), detectable_change_pct
    compiled time     noise_pct, detectable_change_pct, half-range of its round medians,
                      the step's process_noise_pct
    eager time        eager.noise_pct, half-range of its round medians, process_noise_pct
                      (else the variants' noise_pct)

The round-median spread is there because an absolute time has no interleaved partner to
cancel drift against (the A/A ratio and the speedup have one): a host that drifts ±8 %
from round to round drifts as much from one run to the next. The two runs are
independent: the comparison's noise is the root sum of squares (rules.combined_noise_pct).
A run without any noise estimate contributes nothing; when neither has one the change is
judged on the threshold alone, and the row's facts say so (`noise_unmeasured`).
"""

from __future__ import annotations

import dataclasses
import statistics

from ...results.model import Eager, Ratio, Step, Timing, Variant
from ..rules import (
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    Side,
    Subject,
    classify_speed_change,
    combined_noise_pct,
    detectable_change_pct,
    largest,
    missing,
)
from ..verdict import MetricVerdict, Verdict
from .sides import RAW, YARDSTICK, Sides
from .speed_facts import RawBecause, SpeedFacts, Statistic

# metric -> (unit, direction)
_METRICS = {
    "speedup": ("x", HIGHER_IS_BETTER),
    "eager_step_ms": ("ms", LOWER_IS_BETTER),
    "compiled_step_ms": ("ms", LOWER_IS_BETTER),
}


def judge_from_medians(sides: Sides, metric: str, threshold_pct: float) -> MetricVerdict | None:
    """Step time from medians: in yardstick units when both runs timed it on the same
    torch, with the run-to-run drift each run could see counted as noise."""
    base_step, head_step = sides.steps
    base: Eager | Variant | None
    cur: Eager | Variant | None
    if metric == "eager_step_ms":
        base, cur = base_step.eager, head_step.eager
        ratios = (base and base.per_yardstick, cur and cur.per_yardstick)
        raw_noise = (eager_noise_pct(base_step), eager_noise_pct(head_step))
    else:
        base_variant, cur_variant = sides.variants
        base, cur = base_variant, cur_variant
        ratios = (base_variant.compiled_per_yardstick, cur_variant.compiled_per_yardstick)
        raw_noise = (
            compiled_noise_pct(base_variant, base_step),
            compiled_noise_pct(cur_variant, head_step),
        )
    values = (_step_median(base), _step_median(cur))
    if sides.units.normalisation == YARDSTICK and ratios[0] and ratios[1]:
        noise = (
            yardstick_noise_pct(ratios[0], _noise(base), base_step.process_noise_pct),
            yardstick_noise_pct(ratios[1], _noise(cur), head_step.process_noise_pct),
        )
        per_yardstick = (ratios[0].median, ratios[1].median)
        row = judge_speed(
            sides.subject, metric, *values, threshold_pct, noise, per_yardstick=per_yardstick
        )
        return row and dataclasses.replace(row, normalisation=YARDSTICK)
    row = judge_speed(sides.subject, metric, *values, threshold_pct, raw_noise)
    if row is None or not isinstance(row.facts, SpeedFacts):
        return row  # missing
    facts = row.facts
    if sides.units.torch_versions is not None:
        facts = dataclasses.replace(
            facts,
            raw_because=RawBecause.TORCH_VERSIONS,
            torch_versions=sides.units.torch_versions,
        )
    return dataclasses.replace(row, normalisation=RAW, facts=facts)


def _step_median(entry: Eager | Variant | None) -> float | None:
    return entry.step_ms.median if entry is not None and entry.step_ms is not None else None


def _noise(entry: Eager | Variant | None) -> float | None:
    return entry.noise_pct if entry is not None else None


def ratio_median(ratio: Ratio | None) -> float | None:
    return ratio.median if ratio is not None else None


def judge_speed(
    subject: Subject,
    metric: str,
    base_value: float | None,
    cur_value: float | None,
    threshold_pct: float,
    noise_pct: tuple[float | None, float | None],
    *,
    per_yardstick: tuple[float, float] | None = None,
) -> MetricVerdict | None:
    """A speed metric under the noise rule; noise_pct is (baseline, current).

    With `per_yardstick` (the step time in units of the machine yardstick, baseline and
    current), the change is judged on those, so a machine that runs slower today does not
    read as a slower step; the raw times are still shown.
    """
    unit, direction = _METRICS[metric]
    unjudged = missing(subject, metric, base_value, cur_value, positive=True)
    if unjudged is not None or base_value is None or cur_value is None:
        return unjudged
    change_pct = (cur_value - base_value) / base_value * 100
    raw_change_pct = None
    if per_yardstick is not None:
        raw_change_pct = change_pct
        change_pct = (per_yardstick[1] - per_yardstick[0]) / per_yardstick[0] * 100
    worse_by = -change_pct if direction == HIGHER_IS_BETTER else change_pct
    noise = combined_noise_pct(*noise_pct)
    verdict = Verdict(classify_speed_change(worse_by, threshold_pct, noise))
    facts = SpeedFacts(
        statistic=Statistic.MEDIAN,
        rule_verdict=verdict,
        raw_change_pct=raw_change_pct,
        noise_unmeasured=tuple(
            side for side, n in zip((Side.BASELINE, Side.RUN), noise_pct) if n is None
        ),
    )
    return subject.measured(
        metric,
        verdict,
        (base_value, cur_value),
        unit,
        change_pct,
        threshold_pct,
        direction=direction,
        noise_pct=noise,
        detectable_change_pct=detectable_change_pct(noise, threshold_pct),
        facts=facts,
    )


# -- each run's own noise ---------------------------------------------------------------------


def ratio_half_width_pct(ratio: Ratio | None) -> float | None:
    """Half-width of a ratio's CI in percent of its median (the wider side).

    None for a zero-width interval: that is what a single round gives (stats.py), not a
    measurement of zero noise.
    """
    if ratio is None or not ratio.median or ratio.ci_low == ratio.ci_high:
        return None
    median = ratio.median
    return max(median - ratio.ci_low, ratio.ci_high - median) / median * 100


def round_spread_pct(timing: Timing | None) -> float | None:
    """Half-range of the per-round medians in percent of the overall median (≥2 rounds)."""
    if timing is None or not timing.rounds or not timing.median:
        return None
    by_round: dict[int, list[float]] = {}
    for value, round_no in zip(timing.samples, timing.rounds):
        by_round.setdefault(round_no, []).append(value)
    if len(by_round) < 2:
        return None
    medians = [statistics.median(values) for values in by_round.values()]
    spread = (max(medians) - min(medians)) / 2 / timing.median * 100
    return spread or None  # identical rounds: nothing measured, not zero noise


def yardstick_noise_pct(
    ratio: Ratio | None, aa_noise_pct: float | None, process_noise: float | None
) -> float | None:
    """Noise of a step time in yardstick units: its interval, the A/A noise, or the spread
    between the run's processes, whichever is largest."""
    return largest(ratio_half_width_pct(ratio), aa_noise_pct, process_noise)


def speedup_noise_pct(variant: Variant) -> float | None:
    return largest(
        ratio_half_width_pct(variant.speedup),
        variant.noise_pct,
        variant.detectable_change_pct,
    )


def compiled_noise_pct(variant: Variant, step: Step | None = None) -> float | None:
    """An absolute time has no interleaved partner across runs: besides the run's own noise,
    count how far one process's timing lands from another's (process_noise_pct)."""
    return largest(
        variant.noise_pct,
        variant.detectable_change_pct,
        round_spread_pct(variant.step_ms),
        step.process_noise_pct if step is not None else None,
    )


def eager_noise_pct(step: Step) -> float | None:
    eager = step.eager
    own = largest(
        _noise(eager),
        round_spread_pct(eager.step_ms if eager is not None else None),
        step.process_noise_pct,
    )
    if own is not None:
        return own
    return largest(*(v.noise_pct for v in step.variants))
