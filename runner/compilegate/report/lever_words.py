"""The compile-cost levers a step measured, in words, one clause a variant (the facts: each
variant's compile_cost, payoff and regional lever; config cache_artifacts and regional):

    default: cold 17.4 s; warm cache 3.2 s (break-even after 3,900 steps); shipped cache
    artifacts 15.6 s, 0.3 MB (break-even after 19,000 steps); regional (layers: 2 ×
    TransformerEncoderLayer) 12.1 s, step 15.9 ms against eager 10.4 ms: never breaks even
    default: shipped cache artifacts absent: torch 2.4.1 has no torch.compiler.save_cache_artifacts
"""

from __future__ import annotations

from ..results.model import (
    Absence,
    BreakEvenInterval,
    RegionalBlocks,
    RegionalLever,
    Step,
    Variant,
)
from .absence_words import absence_words
from .child_failure_words import error_words
from .wording import steps_text


def lever_sentence(step: Step) -> str | None:
    """`<variant>: cold …; warm cache …; shipped cache artifacts …` for every variant of a
    step that asked for the cache-artifacts lever; None when none did."""
    parts = [clause for variant in step.variants if (clause := _variant(variant))]
    return "; ".join(parts) if parts else None


def _variant(variant: Variant) -> str | None:
    """cold; warm cache; shipped cache artifacts (or why absent); regional, for a variant
    whose step asked for a lever; None otherwise."""
    cost, payoff = variant.compile_cost, variant.payoff
    artifacts = cost is not None and (
        cost.artifacts_bytes is not None or cost.artifacts_absent is not None
    )
    if cost is None or not (artifacts or variant.regional is not None):
        return None
    levers = [f"cold {_s(cost.wall_s)}"]
    if artifacts and cost.warm_wall_s is not None:
        warm = payoff.warm_break_even_steps if payoff is not None else None
        levers.append(f"warm cache {_s(cost.warm_wall_s)}{_after(warm)}")
    if cost.artifacts_absent is not None:
        why = absence_words(cost.artifacts_absent, torch=cost.absent_torch)
        levers.append(f"shipped cache artifacts absent: {why}")
    elif cost.artifacts_wall_s is not None:
        size = f", {(cost.artifacts_bytes or 0) / 1e6:.1f} MB"
        shipped = payoff.artifacts_break_even_steps if payoff is not None else None
        levers.append(f"shipped cache artifacts {_s(cost.artifacts_wall_s)}{size}{_after(shipped)}")
    if variant.regional is not None:
        levers.append(_regional(variant.regional))
    return f"{variant.id}: " + "; ".join(levers)


def _blocks_words(blocks: RegionalBlocks | str) -> str:
    """`layers: 2 × Block`; an older document's words as recorded."""
    if isinstance(blocks, str):
        return blocks
    return f"{blocks.name}: {blocks.count} × {blocks.class_name}"


def _regional(lever: RegionalLever) -> str:
    """`regional (layers: 2 × Block) 12.1 s, step 15.9 ms against eager 10.4 ms: …`"""
    if lever.absent is Absence.PROCESS_FAILED:  # how: its failure, as a variant's is said
        said = error_words(lever.error, lever.failure)
        return f"regional absent: {absence_words(lever.absent)}" + (f": {said}" if said else "")
    if lever.absent is not None:
        return f"regional absent: {absence_words(lever.absent)}"
    blocks = f" ({_blocks_words(lever.blocks)})" if lever.blocks else ""
    if lever.eager_ms is None or lever.compiled_ms is None:
        return f"regional{blocks} {_s(lever.compile_wall_s)}"
    found = lever.break_even_steps
    if found is None:
        after = "never breaks even"
    elif found.estimate is None:
        after = f"not faster; at the earliest it breaks even after {steps_text(found.low)}"
    else:
        after = f"break-even after {steps_text(found.estimate)} (95 % interval {_range(found)})"
    return (
        f"regional{blocks} {_s(lever.compile_wall_s)}, step {lever.compiled_ms:.1f} ms against "
        f"eager {lever.eager_ms:.1f} ms in its process: {after}"
    )


def _range(found: BreakEvenInterval) -> str:
    high = "never" if found.high is None else steps_text(found.high).removesuffix(" steps")
    return f"{steps_text(found.low).removesuffix(' steps')}–{high}"


def _s(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds:.1f} s"


def _after(found: BreakEvenInterval | None) -> str:
    if found is None or found.estimate is None:
        return ""
    return f" (break-even after {steps_text(found.estimate)})"
