"""The words of the CUDA-graph row (gate/judges/cuda_graphs.py finds it): the graphs Inductor
ran without, worded apart from graph breaks.

    CUDA graph skips 0 → 1 (the baseline had none): mutated inputs (1 instances) at model.py:88
    CUDA graph skips 1 → 0: the CUDA graphs are used again
    no CUDA graph skipped, as in the baseline
    CUDA graphs cannot be used on a CPU: the variant ran without them (Inductor: cpu device
    (primals_1) at model.py:12); not judged

Torch's reason is the document's and is said as it is.
"""

from __future__ import annotations

from ...gate.judges.cuda_graphs import CudaGraphFacts, CudaGraphOutcome, SkipAt
from ...gate.verdict import MetricVerdict

# Reasons named after the first one (the rest are counted).
MORE_REASONS_NAMED = 2
DEVICE_NAMES: dict[str | None, str] = {"cpu": "a CPU", None: "this device"}


def cuda_graph_words(row: MetricVerdict, facts: CudaGraphFacts) -> str:
    moved = f"CUDA graph skips {facts.before} → {facts.after}"
    first = (facts.new or facts.reasons)[:1]
    outcome = facts.outcome
    if outcome is CudaGraphOutcome.NO_CUDA:
        return f"{cannot_be_used(facts.device)}: {without_them(facts.reasons)}; not judged"
    if outcome is CudaGraphOutcome.BASELINE_PREDATES:
        if not facts.after:
            return "no CUDA graph skipped; the baseline predates this record"
        return (
            f"CUDA graph skips: {facts.after} ({reasons_said(facts.reasons)}); "
            "the baseline predates this record"
        )
    if outcome is CudaGraphOutcome.MORE:
        had_none = " (the baseline had none)" if facts.before == 0 else ""
        return f"{moved}{had_none}: {reasons_said(facts.new or facts.reasons)}"
    if outcome is CudaGraphOutcome.FEWER:
        if not facts.after:
            return f"{moved}: the CUDA graphs are used again"
        return f"{moved}: fewer than in the baseline ({reasons_said(facts.reasons)})"
    if not facts.after:
        return "no CUDA graph skipped, as in the baseline"
    if facts.new:
        return f"{moved}: as many as in the baseline, now for {skip_said(first[0])}"
    return f"{moved}: unchanged ({reasons_said(facts.reasons)})"


def cuda_graph_detail(facts: object) -> str | None:
    """What a failing row says beyond its counts (which a table gives): the new skips'
    reasons and places; None for other facts, or a row that did not fail."""
    skips = detail_skips(facts)
    return reasons_said(skips) if skips is not None else None


def detail_skips(facts: object) -> tuple[SkipAt, ...] | None:
    """The skips cuda_graph_detail says: the new ones (else every one) of a failing row."""
    if not isinstance(facts, CudaGraphFacts) or facts.outcome is not CudaGraphOutcome.MORE:
        return None
    return facts.new or facts.reasons


def cannot_be_used(device: str | None) -> str:
    """`CUDA graphs cannot be used on a CPU`."""
    return f"CUDA graphs cannot be used on {DEVICE_NAMES.get(device, device or 'this device')}"


def without_them(reasons: tuple[SkipAt, ...]) -> str:
    """`the variant ran without them (Inductor: <torch's first reason>)`."""
    if not reasons:
        return "the variant ran without them"
    return f"the variant ran without them (Inductor: {skip_said(reasons[0])})"


def reasons_said(reasons: tuple[SkipAt, ...]) -> str:
    """The first reason with its place, then the next ones' places: `mutated inputs (1
    instances) at model.py:88; and 1 more: cpu device (primals_1) at model.py:12`."""
    if not reasons:
        return "Inductor gave no reason"
    first, *more = reasons
    said = skip_said(first)
    if more:
        named = ", ".join(skip_said(skip) for skip in more[:MORE_REASONS_NAMED])
        rest = len(more) - MORE_REASONS_NAMED
        said += f"; and {len(more)} more: {named}" + (f" and {rest} others" if rest > 0 else "")
    return said


def skip_said(skip: SkipAt) -> str:
    """`mutated inputs (1 instances) at model.py:88`: torch's reason and where, when known."""
    if skip.file is None:
        return skip.reason
    where = f"{skip.file}:{skip.line}" if skip.line is not None else skip.file
    return f"{skip.reason} at {where}"
