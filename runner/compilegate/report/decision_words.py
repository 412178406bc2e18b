"""The step's decision in words, from the facts its recommendation records
(results/recommendation.py): in full (`decision_sentence`, under every variant table of the
comment and of `report`) and in one line (`short_decision`, what `compilegate run` leads and
ends with). One composition: neither cuts the other's words apart.

An older document recorded its own sentence (`recommendation.text`): that is said as
recorded.
"""

from __future__ import annotations

from ..results.model import (
    BreakEvenInterval,
    Caveat,
    CompileEstimate,
    Decision,
    NumericsStatus,
    Recommendation,
    RuledOut,
    SpeedupEstimate,
    Step,
    Variant,
)
from ..results.payoff import MAX_PROCESSES
from .degraded_words import degraded_reasons
from .speeds import (
    best_variant,
    beyond_run_words,
    pays_off_text,
    statistic_words,
    variant_speed,
)

# An interval whose high end is more than this many times its low end bounds nothing a
# reader can act on: the sentence says the value is too spread instead of printing it.
MEANINGFUL_SPAN = 10
WITHHELD = "the machine was unsteady while this ran (run health)"
EMPTY = {
    Caveat.NO_VARIANT_RAN: "no compiled variant ran successfully",
    Caveat.NUMERICS_UNTRUSTED: "stay eager: no variant's numerics can be trusted",
}
LEVERS = {
    Caveat.LEVER_CACHE_ARTIFACTS: "shipping the cache artifacts",
    Caveat.LEVER_REGIONAL: "compiling regionally",
}
NUMERICS_PROBLEMS = {
    NumericsStatus.FAIL: "its numerics fail",
    NumericsStatus.ERROR: "its numerics check errored",
}


# -- in full ----------------------------------------------------------------------------------


def decision_sentence(step: Step) -> str | None:
    """The decision in full, quoting exactly the numbers it used, estimator named; None for
    a step without one."""
    recommendation = step.recommendation
    if recommendation is None:
        return None
    if recommendation.text is not None:
        return recommendation.text  # an older document's own sentence
    if recommendation.decision is None:
        return None
    said = _measured(step, recommendation)
    if recommendation.withheld:
        return f"no recommendation: {WITHHELD}; measured: {said}"
    return said


def _measured(step: Step, rec: Recommendation) -> str:
    caveats = rec.caveats or ()
    ruled_out = _ruled_out(rec.ruled_out)
    for code, sentence in EMPTY.items():
        if code in caveats:
            return sentence + (ruled_out if code is Caveat.NUMERICS_UNTRUSTED else "")
    variant = step.variant(rec.variant) if rec.variant is not None else None
    if variant is None:  # a document that quotes no variant it holds: its decision alone
        return _DECISION_WORDS.get(rec.decision or Decision.UNDECIDED, "undecided")
    return (
        _main(variant.id, rec)
        + _lever(rec, variant, caveats)
        + _caveats(variant, caveats)
        + ruled_out
    )


_DECISION_WORDS = {
    Decision.COMPILE: "compile",
    Decision.STAY_EAGER: "stay eager",
    Decision.UNDECIDED: "undecided",
}


def _main(name: str, rec: Recommendation) -> str:
    measured = rec.withheld_decision
    decision = measured.decision if measured is not None else rec.decision
    more = measured.processes_needed if measured is not None else rec.processes_needed
    run = f"a {rec.steps_per_run or 0:,}-step run"
    assert rec.speedup is not None  # a quoted variant comes with its speedup
    speed = _speedup(rec.speedup, rec.processes or 1)
    found = rec.break_even_steps
    if decision is Decision.COMPILE:
        assert rec.saving_s is not None and found is not None and found.estimate is not None
        return (
            f"{run}: compiling with {name} saves ~{duration(rec.saving_s.estimate)} "
            f"(break-even after {steps(found.estimate)} steps, 95 % interval for a run "
            f"{_range(found)}; {speed}; {_compile(rec)}{_warm(rec)}{_artifacts(rec)})"
        )
    if decision is Decision.STAY_EAGER:
        if found is None:
            best = _speedup_figures(rec.speedup, rec.processes or 1)
            return f"keep torch.compile off: no variant beats eager (best {name} {best})"
        when = (
            f"only after {steps(found.estimate)} steps"
            if found.estimate is not None
            else f"after {steps(found.low)} steps at the earliest"
        )
        return (
            f"keep torch.compile off for {run}: {name} breaks even {when} (95 % interval for a run "
            f"{_range(found)}; {speed}; {_compile(rec)}{_artifacts(rec)})"
        )
    if found is None:
        return f"undecided for {run}: {name} {speed}; its compile time was not measured"
    estimate = "" if found.estimate is None else f" after {steps(found.estimate)} steps"
    if more is not None:
        total = (rec.processes or 0) + more
        plural = "process" if more == 1 else "processes"
        advice = f"{more} more {plural} would decide (variant_processes: {total})"
    else:
        advice = f"even {MAX_PROCESSES} processes would not decide"
    if found.high is not None:
        advice += f"; a run of {steps(found.high)} steps or more pays off"
    return (
        f"undecided for {run}: {name} breaks even{estimate} (95 % interval for a run "
        f"{_range(found)}; {speed}; {_compile(rec)}); {advice}"
    )


def _speedup(sp: SpeedupEstimate, processes: int) -> str:
    return f"speedup {_speedup_figures(sp, processes)}"


def _speedup_figures(sp: SpeedupEstimate, processes: int) -> str:
    where = f"{processes} processes" if processes > 1 else "1 process"
    # One process on a loaded machine gave "95 % CI 0.00–833561164265529984.00".
    high = "over 100" if sp.high > 100 else f"{sp.high:.2f}"
    return f"{sp.estimate:.2f}×, 95 % CI {sp.low:.2f}–{high}, by mean step time over {where}"


def _compile(rec: Recommendation) -> str:
    """The compile seconds the break-even divides. From one cold compile that is the
    result's compile time (the first process's, report/compile_time_words.py); from several,
    their geometric mean, named so: never a second figure called "cold compile"."""
    cold: CompileEstimate | None = rec.compile_s
    assert cold is not None and cold.estimate is not None  # a break-even divides them
    cold_compiles = rec.cold_compiles or 1
    if cold_compiles > 1:
        what = f"geometric mean of {cold_compiles} cold compiles {cold.estimate:.0f} s"
        source = ""
    else:
        what = f"cold compile {cold.estimate:.0f} s"
        source = " from the warm compiles' spread"
    low, high = cold.low, cold.high
    if low is None or high is None or high <= low:  # a point: no spread to say
        return what
    if high > MEANINGFUL_SPAN * low:
        # Two warm compiles on a loaded machine (t at 1 degree of freedom: 12.7) gave
        # "1–12150 s": an interval that bounds nothing is not printed.
        return (
            f"{what}, too spread for an interval (its 95 % CI{source} spans more than "
            f"{MEANINGFUL_SPAN}×)"
        )
    return f"{what}, 95 % CI {low:.0f}–{high:.0f} s{source}"


def _warm(rec: Recommendation) -> str:
    warm = rec.warm_break_even_steps
    if not warm or warm.estimate is None:
        return ""
    return f"; from a warm cache: break-even after {steps(warm.estimate)} steps"


def _artifacts(rec: Recommendation) -> str:
    """The portable-cache lever's break-even."""
    loaded = rec.artifacts_break_even_steps
    if not loaded or loaded.estimate is None:
        return ""
    return (
        f"; from shipped cache artifacts: break-even after {steps(loaded.estimate)} steps "
        f"(95 % interval {_range(loaded)})"
    )


def _lever(rec: Recommendation, variant: Variant, caveats: tuple[Caveat, ...]) -> str:
    """The cheapest lever that pays off inside the run, as the recommendation names it."""
    regional = variant.regional.break_even_steps if variant.regional is not None else None
    intervals = {
        Caveat.LEVER_CACHE_ARTIFACTS: rec.artifacts_break_even_steps,
        Caveat.LEVER_REGIONAL: regional,
    }
    for code, name in LEVERS.items():
        found = intervals[code]
        if code in caveats and found is not None and found.estimate is not None:
            return (
                f"; the cheapest lever that pays off inside the run: {name} (break-even after "
                f"{steps(found.estimate)} steps, 95 % interval {_range(found)})"
            )
    return ""


def _caveats(variant: Variant, caveats: tuple[Caveat, ...]) -> str:
    out = ""
    degraded = degraded_reasons(variant)
    if Caveat.NOT_WHOLLY_COMPILED in caveats and degraded:
        more = f" (and {len(degraded) - 1} more)" if len(degraded) > 1 else ""
        out += f"; but not wholly compiled: {degraded[0]}{more}"
    if Caveat.NUMERICS_UNCHECKED in caveats:
        out += "; numerics not checked"
    return out


def _ruled_out(ruled_out: RuledOut | None) -> str:
    """A faster variant ruled out by its numerics is named, so nobody picks it by hand."""
    if ruled_out is None:
        return ""
    problem = NUMERICS_PROBLEMS.get(ruled_out.numerics, f"its numerics {ruled_out.numerics.value}")
    return f"; {ruled_out.variant} ({ruled_out.speedup:.2f}×) is not recommended: {problem}"


def _range(found: BreakEvenInterval) -> str:
    high = "never" if found.high is None else steps(found.high)
    return f"{steps(found.low)}–{high}"


def steps(value: float) -> str:
    """A step count to the two significant figures an interval this wide supports."""
    if value < 100:
        return f"{value:,.0f}"
    digits = len(str(int(value))) - 2
    return f"{round(value, -digits):,.0f}"


def duration(seconds: float) -> str:
    """Seconds as a reader reads them: 45 s, 14 min, 3.2 h."""
    if abs(seconds) < 120:
        return f"{seconds:.0f} s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# -- in one line ------------------------------------------------------------------------------


def short_decision(step: Step) -> str:
    """`compile with reduce-overhead 3.50× (3.28–3.73) by mean step time: pays off after 1,500
    steps (…)`, `stay eager: …`, `undecided: …`: the decision of a step that ran, in one
    line, its name not included."""
    recommendation = step.recommendation
    decision = recommendation.decision if recommendation is not None else None
    chosen = _chosen(step)
    best = best_variant(step)
    if best is None:
        return "no variant ran"
    variant, speed = best if chosen is None else (chosen, variant_speed(step, chosen))
    said = f"{variant.id} {speed.text()}" if speed else variant.id
    said += f" by {statistic_words(step, variant)}"
    pays_off = pays_off_text(step)
    if recommendation is not None and recommendation.withheld:
        return f"{pays_off}; measured {said}"
    if decision is Decision.COMPILE and chosen is not None:
        return f"compile with {said}: pays off {pays_off}"
    if decision is Decision.STAY_EAGER:
        assert recommendation is not None  # a decision is a recommendation's
        if speed is not None and speed.high is not None and speed.high < 1:
            return f"stay eager: no variant beats eager (best: {said})"
        beyond = beyond_run_words(recommendation)
        if beyond is not None:
            return f"stay eager ({said}): pays off {beyond}"
        per_run = recommendation.steps_per_run
        run = f"a {per_run:,.0f}-step run" if per_run is not None else "a run"
        return f"stay eager: compiling does not pay off within {run} ({said})"
    if decision is not None:
        return f"{pays_off} ({said})"
    return f"{said}: {speed.words() if speed else 'no speed'}; no decision recorded"


def decided_variant(step: Step) -> Variant | None:
    """The variant `short_decision` names: the recommended one, else the fastest."""
    chosen = _chosen(step)
    if chosen is not None:
        return chosen
    best = best_variant(step)
    return best[0] if best is not None else None


def _chosen(step: Step) -> Variant | None:
    recommendation = step.recommendation
    if recommendation is None or not recommendation.variant:
        return None
    return step.variant(recommendation.variant)


__all__ = ["decided_variant", "decision_sentence", "duration", "short_decision", "steps"]
