"""The compile-cost levers a step measured, in words, one clause a variant (the facts: each
variant's compile_cost and payoff; today the portable-cache lever, config cache_artifacts):

    default: cold 17.4 s; warm cache 3.2 s (break-even after 3,900 steps); shipped cache
    artifacts 15.6 s, 0.3 MB (break-even after 19,000 steps)
    default: shipped cache artifacts absent: torch 2.4.1 has no torch.compiler.save_cache_artifacts
"""

from __future__ import annotations

from ..results.model import BreakEvenInterval, Step, Variant
from .wording import steps_text


def lever_sentence(step: Step) -> str | None:
    """`<variant>: cold …; warm cache …; shipped cache artifacts …` for every variant of a
    step that asked for the cache-artifacts lever; None when none did."""
    parts = [clause for variant in step.variants if (clause := _variant(variant))]
    return "; ".join(parts) if parts else None


def _variant(variant: Variant) -> str | None:
    cost = variant.compile_cost
    if cost is None or (cost.artifacts_bytes is None and cost.artifacts_absent is None):
        return None
    if cost.artifacts_absent is not None:
        return f"{variant.id}: shipped cache artifacts absent: {cost.artifacts_absent}"
    payoff = variant.payoff
    levers = [f"cold {_s(cost.wall_s)}"]
    if cost.warm_wall_s is not None:
        warm = payoff.warm_break_even_steps if payoff is not None else None
        levers.append(f"warm cache {_s(cost.warm_wall_s)}{_after(warm)}")
    if cost.artifacts_wall_s is not None:
        size = f", {(cost.artifacts_bytes or 0) / 1e6:.1f} MB"
        shipped = payoff.artifacts_break_even_steps if payoff is not None else None
        levers.append(f"shipped cache artifacts {_s(cost.artifacts_wall_s)}{size}{_after(shipped)}")
    return f"{variant.id}: " + "; ".join(levers)


def _s(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.1f} s"


def _after(found: BreakEvenInterval | None) -> str:
    if found is None or found.estimate is None:
        return ""
    return f" (break-even after {steps_text(found.estimate)})"
