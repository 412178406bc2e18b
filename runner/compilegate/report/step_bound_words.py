"""What bounds a step, in words (the facts: results/step_bound.py, in the step's
recommendation): eager's kind with the counts and shares behind it, then what each compiled
variant left of it.

    eager is element-wise-bound: 58 % of the profiled step outside matmuls (1,868 ATen ops,
    18.5 µs each; matmuls 42 %: aten::addmm, aten::mm), the work Inductor fuses; default:
    896 ATen ops outside 2 compiled regions
"""

from __future__ import annotations

from ..results.model import BoundKind, Step, StepBound

KIND_WORDS = {
    BoundKind.LAUNCH: "launch-bound",
    BoundKind.DEVICE: "GPU-bound",
    BoundKind.DISPATCH: "dispatch-bound",
    BoundKind.MATMUL: "matmul-bound",
    BoundKind.ELEMENTWISE: "element-wise-bound",
    BoundKind.MIXED: "bound by no single kind of work",
}
# Modes whose CUDA graphs replace the launches of a launch-bound step.
GRAPH_MODES = ("reduce-overhead", "max-autotune")


def bound_sentence(step: Step) -> str | None:
    """`eager is …: …; <variant>: …` for a step whose recommendation carries bounds."""
    bounds = step.recommendation.bounds if step.recommendation is not None else None
    if not bounds:
        return None
    eager = next((b for b in bounds if b.side == "eager"), None)
    parts = []
    if eager is not None:
        parts.append(f"eager is {KIND_WORDS[eager.kind]}: {_why(eager)}{_advice(eager, step)}")
    parts += [f"{b.side}: {_left(b, eager)}" for b in bounds if b.side != "eager"]
    return "; ".join(parts) if parts else None


def _why(b: StepBound) -> str:
    ops = f"{b.aten_ops:,} ATen ops" if b.aten_ops is not None else "its ATen ops"
    per_op = f", {b.step_ms * 1000 / b.aten_ops:.1f} µs each" if b.aten_ops else ""
    dispatch = _pct(b.dispatch_share)
    if b.device == "cuda":
        kernels = f"{b.kernels:,} kernels" if b.kernels is not None else "its kernels"
        each = f" (~{b.step_ms * 1000 / b.kernels:.1f} µs each)" if b.kernels else ""
        busy = (
            f", the GPU busy {_pct(b.compute_share)} of it" if b.compute_share is not None else ""
        )
        most = f" (most in {', '.join(_names(b))})" if _names(b) else ""
        return f"{kernels} in {_ms(b.step_ms)}{each}{busy}{most}"
    if b.kind is BoundKind.DISPATCH:
        return f"{ops} in {_ms(b.step_ms)}{per_op}, dispatch ≈ {dispatch} of it"
    if b.compute_share is None:
        return f"{ops} in {_ms(b.step_ms)}{per_op}"
    matmuls = f"matmuls {_pct(b.compute_share)}{_top(b)}"
    if b.kind is BoundKind.MATMUL:
        return f"{matmuls} of the profiled step ({ops}{per_op}): compiling has little to fuse"
    rest = 1 - b.compute_share - (b.dispatch_share or 0.0)
    return (
        f"{_pct(max(rest, 0.0))} of the profiled step outside matmuls and dispatch ({ops}"
        f"{per_op}; {matmuls}), the work Inductor fuses"
    )


def _advice(b: StepBound, step: Step) -> str:
    if b.kind is not BoundKind.LAUNCH:
        return ""
    if any(v.mode in GRAPH_MODES for v in step.variants if not v.failed):
        return "; reduce-overhead replays a CUDA graph instead of the launches"
    return "; try mode reduce-overhead, which replays a CUDA graph instead of the launches"


def _left(b: StepBound, eager: StepBound | None) -> str:
    """What a compiled variant left of eager's dispatched work, and its own kind."""
    said = []
    if b.aten_ops is not None:
        was = f" (eager {eager.aten_ops:,})" if eager and eager.aten_ops is not None else ""
        said.append(f"{b.aten_ops:,} ATen ops{was}")
    if b.compiled_region_calls is not None:
        said.append(f"{b.compiled_region_calls} compiled regions")
    if b.cuda_graph_replays:
        said.append(f"{b.cuda_graph_replays} CUDA-graph replays")
    if b.device == "cuda" and b.kernels is not None:
        said.append(f"{b.kernels:,} kernels")
    kind = KIND_WORDS[b.kind]
    return f"{kind}, {', '.join(said)}" if said else kind


def _names(b: StepBound) -> list[str]:
    return [str(entry[0]) for entry in b.compute_top[:2]]


def _top(b: StepBound) -> str:
    return f": {', '.join(_names(b))}" if _names(b) else ""


def _pct(share: float | None) -> str:
    return "?" if share is None else f"{share * 100:.0f} %"


def _ms(value: float) -> str:
    return f"{value:.1f} ms" if value >= 1 else f"{value * 1000:.0f} µs"
