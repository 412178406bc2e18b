"""What bounds a step (results/step_bound.py) and its words (report/step_bound_words.py):
each kind from the shares that make it, and a real document's recommendation carrying it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from compilegate.report.step_bound_words import KIND_WORDS, bound_sentence
from compilegate.results.model import (
    BoundKind,
    Recommendation,
    Step,
    StepWork,
    StepWorkCounts,
    StepWorkTiming,
    parse,
)
from compilegate.results.step_bound import bound_of

DATA = Path(__file__).parents[1] / "data"


def work(
    aten_ops: int | None = 1000,
    *,
    kernels: int | None = None,
    dispatch_us: float | None = 1.0,
    profiled_ms: float = 40.0,
    compute_ms: float = 10.0,
    busy_ms: float | None = None,
    regions: int = 0,
) -> StepWork:
    return StepWork(
        counts=StepWorkCounts(
            aten_ops=aten_ops, compiled_region_calls=regions, kernels=kernels, host_syncs=0
        ),
        absent={},
        top={},
        batch_index=5,
        timing=StepWorkTiming(
            profiled_ms=profiled_ms,
            compute_ms=compute_ms,
            compute_top=(("aten::addmm", compute_ms * 0.75, 4), ("aten::mm", compute_ms / 4, 8)),
            device_busy_ms=busy_ms,
            dispatch_us=dispatch_us,
        ),
    )


def test_a_cpu_step_is_bound_by_what_most_of_its_time_goes_to():
    # 1,000 ops at 1 µs in a 20 ms step: dispatch 5 %; matmuls 10 of 40 profiled ms: 25 %.
    elementwise = bound_of("eager", work(), 20.0, "cpu")
    assert elementwise is not None
    assert elementwise.kind is BoundKind.ELEMENTWISE
    assert (elementwise.dispatch_share, elementwise.compute_share) == (0.05, 0.25)
    assert elementwise.compute_top[0] == ("aten::addmm", 0.75, 4)
    matmul = bound_of("eager", work(compute_ms=30.0), 20.0, "cpu")
    assert matmul is not None and matmul.kind is BoundKind.MATMUL
    # 10,000 ops at 1.5 µs in a 20 ms step: 75 % of it is the host's per-op cost.
    dispatch = bound_of("eager", work(10_000, dispatch_us=1.5), 20.0, "cpu")
    assert dispatch is not None and dispatch.kind is BoundKind.DISPATCH
    assert dispatch.dispatch_share == 0.75
    mixed = bound_of("eager", work(compute_ms=20.0), 20.0, "cpu")  # matmuls 50 %
    assert mixed is not None and mixed.kind is BoundKind.MIXED


def test_on_cuda_the_gpus_busy_share_decides_launch_or_device_bound():
    launch = bound_of("eager", work(kernels=1212, busy_ms=2.9), 12.4, "cuda")
    assert launch is not None and launch.kind is BoundKind.LAUNCH
    assert launch.compute_share == round(2.9 / 12.4, 3)
    device = bound_of("eager", work(kernels=400, busy_ms=11.5), 12.4, "cuda")
    assert device is not None and device.kind is BoundKind.DEVICE
    # Busy longer than the fastest step (one profiled iteration is not the fastest): capped.
    over = bound_of("eager", work(kernels=400, busy_ms=20.0), 12.4, "cuda")
    assert over is not None and over.compute_share == 1.0


def test_no_timing_or_no_step_time_is_no_bound_rather_than_a_guess():
    untimed = dataclasses.replace(work(), timing=None)
    assert bound_of("eager", untimed, 20.0, "cpu") is None
    assert bound_of("eager", work(), None, "cpu") is None
    assert bound_of("eager", None, 20.0, "cpu") is None
    # A compiled step whose torch could not tell its ops apart: no dispatch share.
    blind = bound_of("default", work(None), 20.0, "cpu")
    assert blind is not None and blind.dispatch_share is None


def step_with(bounds: list, variants: tuple = ()) -> Step:
    from compilegate.results.model import Status

    return Step(
        name="lm",
        status=Status.OK,
        variants=variants,
        device="cuda",
        recommendation=Recommendation(bounds=tuple(bounds)),
    )


def test_the_words_name_the_counts_and_advise_cuda_graphs_for_a_launch_bound_step():
    eager = bound_of("eager", work(kernels=1212, busy_ms=2.9), 12.4, "cuda")
    compiled = bound_of("default", work(52, kernels=300, busy_ms=3.5, regions=2), 4.0, "cuda")
    said = bound_sentence(step_with([eager, compiled]))
    assert said is not None
    assert said.startswith("eager is launch-bound: 1,212 kernels in 12.4 ms (~10.2 µs each)")
    assert "the GPU busy 23 % of it" in said
    assert "try mode reduce-overhead" in said  # no variant here replays CUDA graphs
    assert "default: GPU-bound, 52 ATen ops (eager 1,000), 2 compiled regions, 300 kernels" in said


def test_a_real_run_records_what_bounds_eager_and_each_variant():
    """A document of a real run (this machine, torch 2.13, the demo transformer): the
    recommendation carries both sides' bounds, and the run's words say them."""
    raw = json.loads((DATA / "step_bound" / "transformer.json").read_text())
    document = parse(raw, "transformer.json")
    step = document.steps[0]
    assert step.recommendation is not None and step.recommendation.bounds
    sides = {b.side: b for b in step.recommendation.bounds}
    assert set(sides) == {"eager", "default"}
    eager, default = sides["eager"], sides["default"]
    assert eager.aten_ops == step.eager.step_work.counts.aten_ops
    assert default.aten_ops is not None and eager.aten_ops is not None
    assert default.aten_ops < eager.aten_ops  # compiled regions took the rest
    said = bound_sentence(step)
    assert said is not None and said.startswith(f"eager is {KIND_WORDS[eager.kind]}: ")
    assert f"{eager.aten_ops:,} ATen ops" in said
