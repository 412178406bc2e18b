"""The decision for a step, in the user's terms: does compiling pay off within their run?

Every measured variant whose numerics did not fail or error gets its payoff (payoff.py:
speedup from mean step times over every process, break-even as a 95 % interval). Against
the step's `steps_per_run`:

    compile      some variant's whole break-even interval lies within the run; among
                 those, the one that saves most
    stay_eager   no variant's interval reaches into the run (or none can be trusted)
    undecided    otherwise: the most promising variant, and how many more processes (or
                 how long a run) would decide

It returns facts, never words (results/model.Recommendation, the shape
schemas/result.schema.json gives): the decision, the quoted variant's figures (speedup,
break-even intervals, saving, compile seconds and how many cold compiles they are from),
caveat codes (the cheapest lever that pays off inside the run, a degraded variant,
unchecked numerics, why there is no variant to quote), and a faster variant ruled out by its
numerics. report/decision_words.py says them. `variant` names the variant those numbers
belong to (None when there is none); only `decision` says what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..config.model import DEFAULT_STEPS_PER_RUN
from .model import (
    Caveat,
    Decision,
    NumericsStatus,
    Payoff,
    Recommendation,
    RuledOut,
    Status,
    Variant,
    Withheld,
    WithheldDecision,
)
from .payoff import (
    Measured,
    break_even,
    measure,
    processes_needed,
    saving_s,
    verdict,
)

# Numerics statuses that rule a variant out: it computes something else than eager, or
# nobody could tell whether it does.
DISQUALIFYING_NUMERICS = (NumericsStatus.FAIL, NumericsStatus.ERROR)


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
        return _empty(steps_per_run, Caveat.NO_VARIANT_RAN)
    trusted = [v for v in timed if not _ruled_out_by_numerics(v)]
    ruled_out = _ruled_out(timed, trusted, measured)
    if not trusted:
        return replace(_empty(steps_per_run, Caveat.NUMERICS_UNTRUSTED), ruled_out=ruled_out)
    chosen = _choose([Analysis(v, analyse(measured[v.id], steps_per_run)) for v in trusted])
    variant, payoff = chosen.variant, chosen.payoff
    cold = measured[variant.id].compile_s
    return Recommendation(
        variant=variant.id,
        caveats=(*_cheapest_lever(payoff, variant), *_caveats(payoff, variant)),
        ruled_out=ruled_out,
        cold_compiles=cold.n if cold is not None else None,
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


def withheld(recommendation: Recommendation) -> Recommendation:
    """The recommendation of a run whose machine was unsteady (results/run_health.py): its
    step times support no decision, so it is `undecided`, `withheld` says why, and
    `withheld_decision` keeps what was measured. The figures stay for the reports."""
    if recommendation.withheld or recommendation.variant is None:
        return recommendation
    assert recommendation.decision is not None  # a quoted variant comes with its decision
    return replace(
        recommendation,
        decision=Decision.UNDECIDED,
        processes_needed=None,
        withheld=Withheld.UNSTEADY_MACHINE,
        withheld_decision=WithheldDecision(
            recommendation.decision, recommendation.processes_needed
        ),
    )


def _empty(steps: int, why: Caveat) -> Recommendation:
    return Recommendation(decision=Decision.STAY_EAGER, caveats=(why,), steps_per_run=steps)


def _cheapest_lever(a: Payoff, variant: Variant) -> tuple[Caveat, ...]:
    """The lever (config cache_artifacts, regional) whose whole break-even interval lies
    inside the run, the earliest; nothing when none does."""
    regional = variant.regional.break_even_steps if variant.regional is not None else None
    # On equal estimates regional compilation is named (the order the words once sorted in).
    levers = [
        (Caveat.LEVER_REGIONAL, regional),
        (Caveat.LEVER_CACHE_ARTIFACTS, a.artifacts_break_even_steps),
    ]
    paying = [
        (found.estimate, index, code)
        for index, (code, found) in enumerate(levers)
        if found is not None
        and found.estimate is not None
        and found.high is not None
        and found.high <= a.steps_per_run
    ]
    if not paying:
        return ()
    return (min(paying)[2],)


def _ruled_out(
    timed: list[Variant], trusted: list[Variant], measured: dict[str, Measured]
) -> RuledOut | None:
    """A faster variant ruled out by its numerics is named, so nobody picks it by hand."""

    def speed(v: Variant) -> float:
        return measured[v.id].speedup.estimate

    fastest = max(timed, key=speed)
    if not _ruled_out_by_numerics(fastest) or (
        trusted and speed(max(trusted, key=speed)) >= speed(fastest)
    ):
        return None
    assert fastest.numerics is not None  # ruled out by its numerics' status
    return RuledOut(fastest.id, speed(fastest), fastest.numerics.status)


def _ruled_out_by_numerics(variant: Variant) -> bool:
    return variant.numerics is not None and variant.numerics.status in DISQUALIFYING_NUMERICS


def _caveats(a: Payoff, variant: Variant) -> tuple[Caveat, ...]:
    """What the user must know before following the advice: degradation, unchecked numerics."""
    if a.decision is Decision.STAY_EAGER:
        return ()
    out: list[Caveat] = []
    if variant.not_wholly_compiled:
        out.append(Caveat.NOT_WHOLLY_COMPILED)
    if variant.numerics is None or variant.numerics.status is not NumericsStatus.PASS:
        out.append(Caveat.NUMERICS_UNCHECKED)
    return tuple(out)
