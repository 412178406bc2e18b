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

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .wording import speed_words, speedup_text, steps_text, variant_name

Doc = Mapping[str, Any]

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


def estimator_text(key: str) -> str:
    return ESTIMATORS.get(key, key.replace("_", " "))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def variant_speed(step: Doc, variant: Doc) -> Speed | None:
    if variant.get("status") != "ok":
        return None
    recommendation = step.get("recommendation") or {}
    quoted = [(variant.get("payoff") or {}).get("speedup")]
    if recommendation.get("variant") == variant.get("id"):
        quoted.append(recommendation.get("speedup"))
    for speed in quoted:
        estimate = _number(speed.get("estimate")) if isinstance(speed, Mapping) else None
        if isinstance(speed, Mapping) and estimate is not None:
            return Speed(
                estimate,
                _number(speed.get("low")),
                _number(speed.get("high")),
                str(speed.get("estimator") or "the decision's estimate"),
            )
    ratio = variant.get("speedup") or {}
    estimate = _number(ratio.get("median"))
    if estimate is None:
        return None
    return Speed(estimate, _number(ratio.get("ci_low")), _number(ratio.get("ci_high")), IN_PROCESS)


def best_variant(step: Doc) -> tuple[Doc, Speed] | None:
    """The variant the decision names, else the fastest that ran."""
    speeds = [(v, variant_speed(step, v)) for v in step.get("variants", [])]
    ran = [(v, s) for v, s in speeds if s is not None]
    if not ran:
        return None
    chosen = (step.get("recommendation") or {}).get("variant")
    for v, s in ran:
        if chosen is not None and v.get("id") == chosen:
            return v, s
    return max(ran, key=lambda pair: pair[1].estimate)


def best_speed_text(step: Doc) -> str:
    """`0.92× (0.88–0.97) default: slower than eager`, or why there is no number."""
    if step.get("status") != "ok":
        return "step failed"
    best = best_variant(step)
    if best is None:
        return "no variant ran"
    variant, speed = best
    return f"{speed.text()} {variant_name(variant)}: {speed.words()}"


def pays_off_text(step: Doc) -> str:
    """When compiling pays off, in steps, as the decision has it."""
    if step.get("status") != "ok":
        return "-"
    recommendation = step.get("recommendation") or {}
    decision = recommendation.get("decision")
    if decision is not None:
        return _decision_pays_off(recommendation, decision)
    best = best_variant(step)
    if best is None:
        return "-"
    variant, speed = best
    chosen = recommendation.get("variant") is not None and recommendation["variant"] == variant.get(
        "id"
    )
    if chosen or (speed.low is not None and speed.low > 1):
        return f"after {steps_text(_number(variant.get('break_even_steps')))}"
    if speed.high is not None and speed.high < 1:
        return "never: slower"
    return "unclear: may be slower" if speed.low is not None else "-"


def variant_pays_off(step: Doc, variant: Doc, speed: Speed | None) -> str:
    """The per-variant table's pay-off: the variant's own `payoff` decision when it has one."""
    payoff = variant.get("payoff")
    if isinstance(payoff, Mapping) and payoff.get("decision"):
        return _decision_pays_off(payoff, payoff["decision"]).removeprefix("after ")
    recommendation = step.get("recommendation") or {}
    decided = recommendation.get("break_even_steps")
    if recommendation.get("variant") == variant.get("id") and isinstance(decided, Mapping):
        return steps_text(_number(decided.get("estimate")))
    if speed is None or speed.low is None:
        return "-"
    if speed.high is not None and speed.high < 1:
        return "never: slower"
    if speed.low <= 1:
        return "unclear: may be slower"
    return steps_text(_number(variant.get("break_even_steps")))


def _decision_pays_off(recommendation: Doc, decision: str) -> str:
    if recommendation.get("withheld"):
        return NO_RECOMMENDATION
    interval = recommendation.get("break_even_steps") or {}
    estimate = _number(interval.get("estimate"))
    low, high = _number(interval.get("low")), _number(interval.get("high"))
    steps = f"after {steps_text(estimate)}" if estimate is not None else ""
    if steps and low is not None and high is not None:
        steps += f" ({steps_text(low).removesuffix(' steps')}–{steps_text(high)})"
    saving = (recommendation.get("saving_s") or {}).get("estimate")
    per_run = _number(recommendation.get("steps_per_run"))
    if decision == "compile":
        text = steps or "at once"
        if _number(saving) is not None and per_run is not None:
            text += f"; saves ~{_duration(float(saving))} in a {per_run:,.0f}-step run"
        return text
    if decision == "stay_eager":
        if steps and per_run is not None:
            return f"{steps}, beyond a {per_run:,.0f}-step run: stay eager"
        return "never: stay eager"
    needed = recommendation.get("processes_needed")
    more = (
        f": {needed} more process{'' if needed == 1 else 'es'} to decide"
        if isinstance(needed, int)
        else ""
    )
    return f"undecided{more}" + (f"; {steps}" if steps else "")


def _duration(seconds: float) -> str:
    if abs(seconds) >= 5400:
        return f"{seconds / 3600:.1f} h"
    if abs(seconds) >= 90:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"
