"""The decision for a step, in the user's terms: does compiling pay off within their run?

Every measured variant whose numerics did not fail or error gets its payoff (payoff.py:
speedup from mean step times over every process, break-even as a 95 % interval). Against
the step's `steps_per_run`:

    compile      some variant's whole break-even interval lies within the run; among
                 those, the one that saves most
    stay_eager   no variant's interval reaches into the run (or none can be trusted)
    undecided    otherwise: the most promising variant, and how many more processes (or
                 how long a run) would decide

The one-line `text` quotes exactly the numbers the decision used, estimator named; the
other fields carry them for the renderers (results/model.Recommendation, the shape
schemas/result.schema.json gives).
`variant` names the variant those numbers belong to (None when there is none); only
`decision` says what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..config.model import DEFAULT_STEPS_PER_RUN
from .model import (
    BreakEvenInterval,
    Decision,
    Payoff,
    Recommendation,
    SpeedupEstimate,
    Status,
    Variant,
)
from .payoff import (
    MAX_PROCESSES,
    Measured,
    break_even,
    measure,
    processes_needed,
    saving_s,
    verdict,
)

# Numerics statuses that rule a variant out: it computes something else than eager, or
# nobody could tell whether it does.
# An interval whose high end is more than this many times its low end bounds nothing a
# reader can act on: the text says the value is too spread instead of printing it.
MEANINGFUL_SPAN = 10
DISQUALIFYING_NUMERICS = {"fail": "its numerics fail", "error": "its numerics check errored"}


@dataclass(frozen=True)
class Analysis:
    """One variant's payoff against the run (`analyse`), with the variant it is of."""

    variant: Variant
    payoff: Payoff


def recommend(
    variants: Sequence[Variant], steps_per_run: int = DEFAULT_STEPS_PER_RUN
) -> Recommendation:
    """The step's `recommendation` from its measured variants."""
    ok = [v for v in variants if v.status is Status.OK]
    measured = {v.id: m for v in ok if (m := measure(v)) is not None}
    timed = [v for v in ok if v.id in measured]
    if not timed:
        return _empty(steps_per_run, "no compiled variant ran successfully")
    trusted = [v for v in timed if _numerics_problem(v) is None]
    ruled_out = _ruled_out(timed, trusted, measured)
    if not trusted:
        return _empty(steps_per_run, "stay eager: no variant's numerics can be trusted" + ruled_out)
    chosen = _choose([Analysis(v, analyse(measured[v.id], steps_per_run)) for v in trusted])
    variant, payoff = chosen.variant, chosen.payoff
    text = _text(variant.id, payoff, measured[variant.id])
    return Recommendation(
        variant=variant.id,
        text=text + _cheapest_lever(payoff, variant) + _caveats(payoff, variant) + ruled_out,
        decision=payoff.decision,
        steps_per_run=payoff.steps_per_run,
        speedup=payoff.speedup,
        break_even_steps=payoff.break_even_steps,
        warm_break_even_steps=payoff.warm_break_even_steps,
        artifacts_break_even_steps=payoff.artifacts_break_even_steps,
        saving_s=payoff.saving_s,
        processes_needed=payoff.processes_needed,
        processes=payoff.processes,
        compile_s=payoff.compile_s,
    )


def _choose(analyses: list[Analysis]) -> Analysis:
    """The variant that pays off and saves most; else the most promising open one; else
    the one that comes nearest to paying off (earliest break-even), or the fastest."""

    def saving(a: Analysis) -> tuple[float, str]:
        assert a.payoff.saving_s is not None  # a variant that pays off has its saving
        return a.payoff.saving_s.estimate, a.variant.id

    def speed(a: Analysis) -> tuple[float, str]:
        assert a.payoff.speedup is not None  # analyse gives every payoff its speedup
        return a.payoff.speedup.estimate, a.variant.id

    def soonest(a: Analysis) -> tuple[float, str]:
        assert a.payoff.break_even_steps is not None
        return a.payoff.break_even_steps.low, a.variant.id

    paying = [a for a in analyses if a.payoff.decision is Decision.COMPILE]
    if paying:
        return max(paying, key=saving)
    undecided = [a for a in analyses if a.payoff.decision is Decision.UNDECIDED]
    if undecided:
        return max(undecided, key=speed)
    near = [a for a in analyses if a.payoff.break_even_steps is not None]
    if near:
        return min(near, key=soonest)
    return max(analyses, key=speed)


def analyse(m: Measured, steps: int) -> Payoff:
    """One variant's payoff against a `steps`-step run, from what its processes measured."""
    speedup = m.speedup.speedup_estimate(m.estimator)
    if m.compile_s is None:  # no compile seconds measured: the speedup alone decides
        decision = Decision.STAY_EAGER if m.speedup.high <= 1 else Decision.UNDECIDED
        found = warm = artifacts = None
        saving = None
    else:
        found = break_even(m, m.compile_s)
        decision = Decision(verdict(found, steps))
        warm = break_even(m, m.warm_compile_s) if m.warm_compile_s is not None else None
        loaded = m.artifacts_compile_s
        artifacts = break_even(m, loaded) if loaded is not None else None
        saving = saving_s(m, m.compile_s, steps, found)
    return Payoff(
        decision=decision,
        steps_per_run=steps,
        speedup=speedup,
        break_even_steps=found.interval if found else None,
        warm_break_even_steps=warm.interval if warm else None,
        artifacts_break_even_steps=artifacts.interval if artifacts else None,
        saving_s=saving,
        processes_needed=processes_needed(m, steps) if decision is Decision.UNDECIDED else None,
        processes=m.processes,
        compile_s=m.compile_s.compile_estimate if m.compile_s else None,
    )


WITHHELD = "the machine was unsteady while this ran (run health)"


def withheld(recommendation: Recommendation) -> Recommendation:
    """The recommendation of a run whose machine was unsteady (results/run_health.py): its
    step times support no decision, so it is `undecided`, `withheld` says why, and the text
    keeps what was measured. The figures stay for the reports."""
    if recommendation.withheld or recommendation.variant is None:
        return recommendation
    return replace(
        recommendation,
        decision=Decision.UNDECIDED,
        processes_needed=None,
        withheld=WITHHELD,
        text=f"no recommendation: {WITHHELD}; measured: {recommendation.text or ''}",
    )


def _empty(steps: int, text: str) -> Recommendation:
    return Recommendation(decision=Decision.STAY_EAGER, text=text, steps_per_run=steps)


def _text(name: str, a: Payoff, m: Measured) -> str:
    run = f"a {a.steps_per_run:,}-step run"
    assert a.speedup is not None  # analyse gives every payoff its speedup
    speed = _speedup(a.speedup, m)
    found = a.break_even_steps
    if a.decision is Decision.COMPILE:
        assert a.saving_s is not None and found is not None and found.estimate is not None
        return (
            f"{run}: compiling with {name} saves ~{duration(a.saving_s.estimate)} "
            f"(break-even after {steps(found.estimate)} steps, 95 % interval for a run "
            f"{_range(found)}; {speed}; {_compile(m)}{_warm(a)}{_artifacts(a)})"
        )
    if a.decision is Decision.STAY_EAGER:
        if found is None:
            best = speed.replace("speedup ", "", 1)
            return f"keep torch.compile off: no variant beats eager (best {name} {best})"
        when = (
            f"only after {steps(found.estimate)} steps"
            if found.estimate is not None
            else f"after {steps(found.low)} steps at the earliest"
        )
        return (
            f"keep torch.compile off for {run}: {name} breaks even {when} (95 % interval for a run "
            f"{_range(found)}; {speed}; {_compile(m)}{_artifacts(a)})"
        )
    if found is None:
        return f"undecided for {run}: {name} {speed}; its compile time was not measured"
    estimate = "" if found.estimate is None else f" after {steps(found.estimate)} steps"
    more = a.processes_needed
    if more is not None:
        total = (a.processes or 0) + more
        plural = "process" if more == 1 else "processes"
        advice = f"{more} more {plural} would decide (variant_processes: {total})"
    else:
        advice = f"even {MAX_PROCESSES} processes would not decide"
    if found.high is not None:
        advice += f"; a run of {steps(found.high)} steps or more pays off"
    return (
        f"undecided for {run}: {name} breaks even{estimate} (95 % interval for a run "
        f"{_range(found)}; {speed}; {_compile(m)}); {advice}"
    )


def _speedup(sp: SpeedupEstimate, m: Measured) -> str:
    where = f"{m.processes} processes" if m.processes > 1 else "1 process"
    # One process on a loaded machine gave "95 % CI 0.00–833561164265529984.00".
    high = "over 100" if sp.high > 100 else f"{sp.high:.2f}"
    return (
        f"speedup {sp.estimate:.2f}×, 95 % CI {sp.low:.2f}–{high}, by mean step time over {where}"
    )


def _compile(m: Measured) -> str:
    """The compile seconds the break-even divides. From one cold compile that is the
    result's compile time (the first process's, report/compile_time_words.py); from several,
    their geometric mean, named so: never a second figure called "cold compile"."""
    cold = m.compile_s
    assert cold is not None
    if cold.n > 1:
        what = f"geometric mean of {cold.n} cold compiles {cold.estimate:.0f} s"
        source = ""
    else:
        what = f"cold compile {cold.estimate:.0f} s"
        source = " from the warm compiles' spread"
    if cold.half_width <= 0:
        return what
    if cold.high > MEANINGFUL_SPAN * cold.low:
        # Two warm compiles on a loaded machine (t at 1 degree of freedom: 12.7) gave
        # "1–12150 s": an interval that bounds nothing is not printed.
        return (
            f"{what}, too spread for an interval (its 95 % CI{source} spans more than "
            f"{MEANINGFUL_SPAN}×)"
        )
    return f"{what}, 95 % CI {cold.low:.0f}–{cold.high:.0f} s{source}"


def _warm(a: Payoff) -> str:
    warm = a.warm_break_even_steps
    if not warm or warm.estimate is None:
        return ""
    return f"; from a warm cache: break-even after {steps(warm.estimate)} steps"


def _artifacts(a: Payoff) -> str:
    """The portable-cache lever's break-even, and whether it alone pays off inside the run."""
    loaded = a.artifacts_break_even_steps
    if not loaded or loaded.estimate is None:
        return ""
    return (
        f"; from shipped cache artifacts: break-even after {steps(loaded.estimate)} steps "
        f"(95 % interval {_range(loaded)})"
    )


def _cheapest_lever(a: Payoff, variant: Variant) -> str:
    """The lever (config cache_artifacts, regional) whose whole break-even interval lies
    inside the run, the earliest; nothing when none does."""
    regional = variant.regional.break_even_steps if variant.regional is not None else None
    levers = [
        ("shipping the cache artifacts", a.artifacts_break_even_steps),
        ("compiling regionally", regional),
    ]
    paying = [
        (found.estimate, name, found)
        for name, found in levers
        if found is not None
        and found.estimate is not None
        and found.high is not None
        and found.high <= a.steps_per_run
    ]
    if not paying:
        return ""
    _, name, found = min(paying)
    assert found.estimate is not None  # `paying` holds estimates only
    return (
        f"; the cheapest lever that pays off inside the run: {name} (break-even after "
        f"{steps(found.estimate)} steps, 95 % interval {_range(found)})"
    )


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


def _ruled_out(timed: list[Variant], trusted: list[Variant], measured: dict[str, Measured]) -> str:
    """A faster variant ruled out by its numerics is named, so nobody picks it by hand."""

    def speed(v: Variant) -> float:
        return measured[v.id].speedup.estimate

    fastest = max(timed, key=speed)
    problem = _numerics_problem(fastest)
    if problem is None or (trusted and speed(max(trusted, key=speed)) >= speed(fastest)):
        return ""
    return f"; {fastest.id} ({speed(fastest):.2f}×) is not recommended: {problem}"


def _numerics_status(variant: Variant) -> str | None:
    return variant.numerics.status.value if variant.numerics is not None else None


def _numerics_problem(variant: Variant) -> str | None:
    return DISQUALIFYING_NUMERICS.get(_numerics_status(variant) or "")


def _caveats(a: Payoff, variant: Variant) -> str:
    """What the user must know before following the advice: degradation, unchecked numerics."""
    if a.decision is Decision.STAY_EAGER:
        return ""
    out = ""
    degraded = variant.degraded or ()
    if degraded:
        more = f" (and {len(degraded) - 1} more)" if len(degraded) > 1 else ""
        out += f"; but not wholly compiled: {degraded[0]}{more}"
    if _numerics_status(variant) != "pass":
        out += "; numerics not checked"
    return out
