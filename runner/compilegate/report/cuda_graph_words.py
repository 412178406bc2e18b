"""What `compilegate run` says of a variant that ran without its CUDA graphs (its
`cuda_graphs` record has skips: child/cuda_graph_skips.py), under the variants table and in
the recommendation; the gate's row is row_words/cuda_graphs.py's.

    reduce-overhead ran without CUDA graphs: mutated inputs (1 instances) at model.py:88
    reduce-overhead, max-autotune ran without CUDA graphs: they cannot be used on a CPU
    (Inductor: multiple devices)

On a CPU every graph is skipped, so it is said once for every variant that asked.
"""

from __future__ import annotations

from ..gate.judges.cuda_graphs import CUDA, SkipAt
from ..results.model import Step, Variant
from .row_words.cuda_graphs import reasons_said, skip_said

WITHOUT = "ran without CUDA graphs"


def ran_without_graphs(variant: Variant, device: str | None) -> str | None:
    """`reduce-overhead ran without CUDA graphs: <torch's reason> at <place>`, or None when
    the variant recorded no skip."""
    skips = _skips(variant)
    if skips is None:
        return None
    if device != CUDA:
        return f"{variant.id} {WITHOUT}: {_no_cuda(device, skips)}"
    count = variant.cuda_graphs.skips if variant.cuda_graphs is not None else 0
    counted = f" ({count} graphs)" if count > 1 else ""
    return f"{variant.id} {WITHOUT}{counted}: {reasons_said(skips)}"


def step_graph_notes(step: Step) -> list[str]:
    """The notes under a step's variants table: one per variant that ran without its CUDA
    graphs on a GPU; on a CPU one for all of them."""
    without = [v for v in step.variants if not v.failed and _skips(v) is not None]
    if not without:
        return []
    if step.device != CUDA:
        ids = ", ".join(v.id for v in without)
        return [f"{ids} {WITHOUT}: {_no_cuda(step.device, _skips(without[0]) or ())}"]
    return [said for v in without if (said := ran_without_graphs(v, step.device))]


def _no_cuda(device: str | None, skips: tuple[SkipAt, ...]) -> str:
    where = "a CPU" if device == "cpu" else "this device"
    said = f"they cannot be used on {where}"
    return f"{said} (Inductor: {skip_said(skips[0])})" if skips else said


def _skips(variant: Variant) -> tuple[SkipAt, ...] | None:
    """The variant's skip reasons (possibly none given), or None when it skipped nothing."""
    graphs = variant.cuda_graphs
    if graphs is None or graphs.skips == 0:
        return None
    return tuple(SkipAt.of(skip) for skip in graphs.reasons)
