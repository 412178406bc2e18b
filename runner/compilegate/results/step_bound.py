"""What bounds a step: the counts of one steady iteration read against its time (issue 39).

For eager and for each measured variant, from its step-work record (child/step_work.py: the
counts, and the profiled iteration's `timing`) and its fastest unprofiled iteration in its
first process (the figure load moves least):

    dispatch_share   ATen calls × what one trivial call costs in that process
                     (`timing.dispatch_us`, a launch included on CUDA) ÷ the step: the
                     host's fixed cost per op, the part no faster kernel removes
    compute_share    CUDA: how long the GPU was busy (the kernels' union) ÷ the step;
                     CPU: the matrix multiplications' and convolutions' share of the
                     profiled iteration (both sides of it slowed by the profiler, the small
                     ops more: an underestimate for a step of many small ops)

    launch       CUDA, the GPU busy under LAUNCH_BELOW of the step: it waits for the host
                 (fewer launches help: reduce-overhead's CUDA graphs, fusion)
    device       CUDA, busy DEVICE_FROM of it or more: faster kernels help, fewer do not
    dispatch     CPU (or CUDA without kernel times), the per-op cost DISPATCH_FROM of
                 the step or more
    matmul       CPU, MATMUL_FROM of the time in matmuls: compiling has little to fuse
    elementwise  CPU, ELEMENTWISE_FROM of it in neither matmuls nor dispatch: the
                 element-wise and memory-bound ops Inductor fuses
    mixed        none of these

Shares and the kind are descriptions, never gated: the counts under them are exact, the
times are not (one profiled iteration; the fastest of the timed ones).
"""

from __future__ import annotations

from .model import BoundKind, Step, StepBound, StepWork, Variant

LAUNCH_BELOW = 0.5
DEVICE_FROM = 0.8
DISPATCH_FROM = 0.5
MATMUL_FROM = 0.6
ELEMENTWISE_FROM = 0.5
TOP = 3


def step_bounds(step: Step) -> list[StepBound]:
    """The bound of eager and of each measured variant that has a step-work record with its
    timing, in the step's order."""
    device = step.device or "cpu"
    out = []
    eager = step.eager
    if eager is not None:
        fastest = eager.processes[0].fastest_ms.eager if eager.processes else eager.step_ms.median
        found = bound_of("eager", eager.step_work, fastest, device)
        if found is not None:
            out.append(found)
    for variant in step.variants:
        if variant.failed:
            continue
        found = bound_of(variant.id, variant.step_work, _compiled_fastest(variant), device)
        if found is not None:
            out.append(found)
    return out


def _compiled_fastest(variant: Variant) -> float | None:
    if variant.processes and variant.processes[0].fastest_ms.compiled is not None:
        return variant.processes[0].fastest_ms.compiled
    return variant.step_ms.median if variant.step_ms is not None else None


def bound_of(
    side: str, work: StepWork | None, step_ms: float | None, device: str
) -> StepBound | None:
    """The bound of one side; None without a timed step-work record or a step time."""
    if work is None or work.timing is None or step_ms is None or step_ms <= 0:
        return None
    timing, counts = work.timing, work.counts
    cuda = device == "cuda"
    dispatch = None
    if counts.aten_ops is not None and timing.dispatch_us is not None:
        dispatch = _share(counts.aten_ops * timing.dispatch_us / 1000, step_ms)
    if cuda:
        busy = timing.device_busy_ms
        compute = _share(busy, step_ms) if busy is not None else None
    else:
        compute = _share(timing.compute_ms, timing.profiled_ms) if timing.profiled_ms else None
    kind = _kind(cuda, dispatch, compute)
    spent = timing.compute_ms
    top = tuple(
        (str(name), _share(float(ms), spent) if spent else 0.0, int(calls))
        for name, ms, calls in timing.compute_top[:TOP]
    )
    return StepBound(
        side=side,
        kind=kind,
        device="cuda" if cuda else device,
        step_ms=round(step_ms, 4),
        aten_ops=counts.aten_ops,
        kernels=counts.kernels,
        dispatch_share=dispatch,
        compute_share=compute,
        compiled_region_calls=counts.compiled_region_calls,
        cuda_graph_replays=counts.cuda_graph_replays,
        compute_top=top,
    )


def _kind(cuda: bool, dispatch: float | None, compute: float | None) -> BoundKind:
    if cuda and compute is not None:  # the GPU's idle time is the host's, dispatch included
        if compute < LAUNCH_BELOW:
            return BoundKind.LAUNCH
        return BoundKind.DEVICE if compute >= DEVICE_FROM else BoundKind.MIXED
    if dispatch is not None and dispatch >= DISPATCH_FROM:
        return BoundKind.DISPATCH
    if compute is None or cuda:
        return BoundKind.MIXED
    if compute >= MATMUL_FROM:
        return BoundKind.MATMUL
    if 1 - compute - (dispatch or 0.0) >= ELEMENTWISE_FROM:
        return BoundKind.ELEMENTWISE
    return BoundKind.MIXED


def _share(part: float, whole: float) -> float:
    return round(min(max(part / whole, 0.0), 1.0), 3)
