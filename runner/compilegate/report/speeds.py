"""One speed per variant: compiled vs eager, from one estimator, named once in the report.

A variant's speed is the decision's own number: the variant's `payoff` (the estimate the
step's `recommendation` is made from, the same for every variant), or the recommendation's
when it is about that variant and quotes one; for a result without them, the variant's
in-process ratio of medians with its interval over rounds. The gate's speedup rows compare a third
estimate between runs (each process's fastest iterations, which move least with load); the
report shows those only as changes against the baseline, never as the variant's speed.

How a pay-off is said: the decision's break-even when it gives one, else the variant's,
and only for a variant whose whole interval is faster than eager — a break-even for a
variant that may well be slower is a number nobody should plan with.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results.model import (
    BreakEvenInterval,
    Decision,
    Payoff,
    Recommendation,
    SpeedupEstimate,
    SpeedupEstimator,
    Step,
    Variant,
)
from ..results.payoff import process_means
from .wording import speed_words, speedup_text, steps_count, steps_text, variant_name

IN_PROCESS = "in_process_median"
# An unsteady run's decision (results/recommendation.withheld): what the pays-off cell says.
NO_RECOMMENDATION = "no recommendation: the machine was unsteady (run health)"
ESTIMATORS = {
    IN_PROCESS: (
        "eager ÷ compiled median step time, timed in the same process with the rounds "
        "interleaved; the interval is 95 % over rounds"
    ),
}


@dataclass(frozen=True)
class Speed:
    estimate: float
    low: float | None
    high: float | None
    estimator: str

    def text(self) -> str:
        return speedup_text(self.estimate, self.low, self.high)

    def words(self) -> str:
        return speed_words(self.low, self.high)


@dataclass(frozen=True)
class Statistic:
    """How a variant's eager and compiled ms were summarised, so the speedup beside them is
    their ratio: `mean` (per process, geometric mean over processes) or `median`."""

    name: str
    processes: int


def variant_statistic(step: Step, variant: Variant) -> Statistic:
    """The statistic the variant's speedup is made of: the mean over its processes when the
    speedup is the decision's (results/payoff.py), else the in-process median ratio."""
    speed = variant_speed(step, variant)
    means = process_means(variant)
    if speed is not None and speed.estimator != IN_PROCESS and means:
        return Statistic("mean", len(means))
    return Statistic("median", 1)


def statistic_words(step: Step, variant: Variant) -> str:
    statistic = variant_statistic(step, variant)
    return "mean step time" if statistic.name == "mean" else "median step time"


def estimator_text(key: str) -> str:
    return ESTIMATORS.get(key, key.replace("_", " "))


def estimator_words(speed: SpeedupEstimate, processes: int | None) -> str:
    """How a payoff's speedup was estimated (results/payoff.py's code), with the number of
    processes behind it; an older document's sentence as recorded."""
    if speed.estimator is SpeedupEstimator.MEAN_OVER_PROCESSES:
        over = f"over {processes} processes" if processes else "over the processes"
        return (
            f"mean step time (outliers included), eager/compiled per process, geometric mean "
            f"{over}, 95 % t interval"
        )
    if speed.estimator is SpeedupEstimator.MEAN_ONE_PROCESS:
        return "mean step time (outliers included), eager/compiled, one process, 95 % CI"
    return str(speed.estimator)


def _chosen(step: Step) -> str | None:
    """The variant the step's recommendation names, if any."""
    return step.recommendation.variant if step.recommendation is not None else None


def variant_speed(step: Step, variant: Variant) -> Speed | None:
    if variant.failed:
        return None
    payoff, advice = variant.payoff, step.recommendation
    quoted = [(payoff.speedup, payoff.processes) if payoff is not None else (None, None)]
    if advice is not None and advice.variant == variant.id:
        quoted.append((advice.speedup, advice.processes))
    for speed, processes in quoted:
        if speed is not None:
            return Speed(
                float(speed.estimate),
                float(speed.low),
                float(speed.high),
                estimator_words(speed, processes) or "the decision's estimate",
            )
    ratio = variant.speedup
    if ratio is None:
        return None
    return Speed(float(ratio.median), float(ratio.ci_low), float(ratio.ci_high), IN_PROCESS)


def best_variant(step: Step) -> tuple[Variant, Speed] | None:
    """The variant the decision names, else the fastest that ran."""
    speeds = [(v, variant_speed(step, v)) for v in step.variants]
    ran = [(v, s) for v, s in speeds if s is not None]
    if not ran:
        return None
    chosen = _chosen(step)
    for v, s in ran:
        if chosen is not None and v.id == chosen:
            return v, s
    return max(ran, key=lambda pair: pair[1].estimate)


def best_speed_text(step: Step) -> str:
    """`0.92× (0.88–0.97) default: slower than eager`, or why there is no number."""
    if step.failed:
        return "step failed"
    best = best_variant(step)
    if best is None:
        return "no variant ran"
    variant, speed = best
    return f"{speed.text()} {variant_name(variant)}: {speed.words()}"


def pays_off_text(step: Step) -> str:
    """When compiling pays off, in steps, as the decision has it."""
    if step.failed:
        return "-"
    recommendation = step.recommendation
    if recommendation is not None and recommendation.decision is not None:
        return _decision_pays_off(recommendation, recommendation.decision)
    best = best_variant(step)
    if best is None:
        return "-"
    variant, speed = best
    chosen = _chosen(step)
    if (chosen is not None and chosen == variant.id) or (speed.low is not None and speed.low > 1):
        return f"after {steps_text(variant.break_even_steps)}"
    if speed.high is not None and speed.high < 1:
        return "never: slower"
    return "unclear: may be slower" if speed.low is not None else "-"


def variant_pays_off(step: Step, variant: Variant, speed: Speed | None) -> str:
    """The per-variant table's pay-off: the variant's own `payoff` decision when it has one."""
    if variant.payoff is not None:
        return _decision_pays_off(variant.payoff, variant.payoff.decision, lead="")
    recommendation = step.recommendation
    if (
        recommendation is not None
        and recommendation.variant == variant.id
        and recommendation.break_even_steps is not None
    ):
        return steps_text(recommendation.break_even_steps.estimate)
    if speed is None or speed.low is None:
        return "-"
    if speed.high is not None and speed.high < 1:
        return "never: slower"
    if speed.low <= 1:
        return "unclear: may be slower"
    return steps_text(variant.break_even_steps)


def _decision_pays_off(
    figures: Recommendation | Payoff, decision: Decision, lead: str = "after "
) -> str:
    """The pays-off words of a decision: the step's recommendation, or a variant's payoff.
    `lead`: what comes before a break-even that starts the words (the variant table's
    column says none)."""
    if isinstance(figures, Recommendation) and figures.withheld:
        return NO_RECOMMENDATION
    steps = break_even_words(figures.break_even_steps)
    saving = figures.saving_s.estimate if figures.saving_s is not None else None
    per_run = figures.steps_per_run
    if decision is Decision.COMPILE:
        text = f"{lead}{steps}" if steps else "at once"
        if saving is not None and per_run is not None:
            text += f"; saves ~{_duration(float(saving))} in a {per_run:,.0f}-step run"
        return text
    if decision is Decision.STAY_EAGER:
        beyond = beyond_run_words(figures, lead)
        return f"{beyond}: stay eager" if beyond is not None else "never: stay eager"
    needed = figures.processes_needed
    more = (
        f": {needed} more process{'' if needed == 1 else 'es'} to decide"
        if isinstance(needed, int)
        else ""
    )
    return f"undecided{more}" + (f"; after {steps}" if steps else "")


def break_even_words(interval: BreakEvenInterval | None) -> str:
    """`1,500 steps (1,200–2,000 steps)` of a break-even with an estimate, else ""."""
    estimate = interval.estimate if interval is not None else None
    if interval is None or estimate is None:
        return ""
    words = steps_text(estimate)
    if interval.high is not None:
        words += f" ({steps_count(interval.low)}–{steps_text(interval.high)})"
    return words


def beyond_run_words(figures: Recommendation | Payoff, lead: str = "after ") -> str | None:
    """`after 14,000 steps (8,000–never), beyond a 10,000-step run`: a stay-eager decision's
    break-even against the run; None without a break-even or a run length."""
    steps = break_even_words(figures.break_even_steps)
    per_run = figures.steps_per_run
    if not steps or per_run is None:
        return None
    return f"{lead}{steps}, beyond a {per_run:,.0f}-step run"


def _duration(seconds: float) -> str:
    if abs(seconds) >= 5400:
        return f"{seconds / 3600:.1f} h"
    if abs(seconds) >= 90:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"
