"""The step-work pass (child/step_work.py): the tally over profiler events, and real eager
steps with planted work, each plant moving exactly the counts it should (no compile)."""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from compilegate.child.protocol import STEP_WORK_COUNTS, check_step_work  # noqa: E402
from compilegate.child.step_work import (  # noqa: E402
    CPU_KERNELS_ABSENT,
    HARNESS_SYNC,
    MEMORY_EVENT,
    _Event,
    count_step_work,
    tally,
)
from compilegate.child.training import TrainingStep  # noqa: E402
from compilegate.child.user_code import StepParts  # noqa: E402
from compilegate.report.absence_words import step_work_absent_words  # noqa: E402
from compilegate.results.model import Absence, StepWork, StepWorkCounts  # noqa: E402

# --- the tally, over events made up here --------------------------------------------------


def op(name: str, start: int, end: int, thread: int = 1, flops: int = 0) -> _Event:
    return _Event(name, start, end, thread, "cpu", flops=flops)


def alloc(at: int, nbytes: int, device: str = "cpu", thread: int = 1) -> _Event:
    return _Event(MEMORY_EVENT, at, at, thread, device, nbytes=nbytes)


def test_ops_inside_compiled_code_are_not_dispatched_ops_but_their_flops_count():
    events = [
        op("aten::mul", 0, 10),
        op("Torch-Compiled Region: 0/0", 20, 100),
        op("aten::mm", 30, 40, flops=64),  # Inductor's extern matmul
        op("CompiledFunctionBackward", 200, 300),
        op("Torch-Compiled Region: 0/1", 150, 160),  # the same frame's other cache entry
        op("aten::mm", 210, 220, flops=64),
        op("aten::add_", 400, 410),
    ]
    counted = tally(events, device="cpu", compiled=True)
    assert counted["counts"]["aten_ops"] == 2
    assert counted["counts"]["compiled_region_calls"] == 3
    assert counted["counts"]["flops"] == 128
    assert counted["top"]["aten_ops"] == [["aten::add_", 1], ["aten::mul", 1]]
    assert counted["top"]["compiled_region_calls"] == [
        ["Torch-Compiled Region: 0", 2],  # by frame, not by recompile
        ["CompiledFunctionBackward", 1],
    ]


def test_on_the_cpu_kernels_and_graph_replays_are_absent_with_a_reason_never_zero():
    counted = tally([op("aten::mm", 0, 1)], device="cpu", compiled=False)
    assert counted["counts"]["kernels"] is None
    assert counted["absent"]["kernels"] == CPU_KERNELS_ABSENT
    assert counted["counts"]["cuda_graph_replays"] is None
    assert counted["counts"]["compiled_region_calls"] == 0  # eager: truly none
    check_step_work({**counted, "batch_index": 0}, "step_work")  # the parent's door takes it


def test_a_compiled_step_without_dynamo_events_cannot_split_its_ops():
    """A torch whose profiler marks no compiled region: ops inside and outside compiled code
    look alike, so neither count is taken."""
    counted = tally([op("aten::mm", 0, 1)], device="cpu", compiled=True)
    assert counted["counts"]["aten_ops"] is None
    assert counted["counts"]["compiled_region_calls"] is None
    assert set(counted["absent"]) >= {"aten_ops", "compiled_region_calls"}
    only_lookup = tally(
        [op("TorchDynamo Cache Lookup", 0, 1), op("aten::mm", 2, 3)], device="cpu", compiled=True
    )  # Dynamo ran and entered nothing compiled: a true 0
    assert only_lookup["counts"]["compiled_region_calls"] == 0
    assert only_lookup["counts"]["aten_ops"] == 1


def test_an_item_is_one_sync_and_the_cuda_wait_inside_it_is_not_another():
    events = [
        op("aten::item", 0, 100),
        op("aten::_local_scalar_dense", 10, 90),
        op("cudaMemcpyAsync", 20, 30),
        op("cudaStreamSynchronize", 40, 80),
        op("cudaDeviceSynchronize", 200, 210),  # the step's own wait
        op(HARNESS_SYNC, 300, 400),  # the pass's wait for the kernels: not the step's
        op("cudaDeviceSynchronize", 310, 390),
        _Event("void gemm_kernel<…>", 50, 60, 7, "cuda"),
        _Event("Memcpy DtoH (Device -> Pageable)", 60, 70, 7, "cuda"),
        op("cudaGraphLaunch", 500, 510),
    ]
    counted = tally(events, device="cuda", compiled=False)
    assert counted["counts"]["host_syncs"] == 2
    assert counted["top"]["host_syncs"] == [
        ["aten::_local_scalar_dense", 1],
        ["cudaDeviceSynchronize", 1],
    ]
    assert counted["counts"]["kernels"] == 2
    assert counted["counts"]["cuda_graph_replays"] == 1
    assert counted["absent"] == {}


def test_on_cuda_an_item_of_a_cpu_tensor_is_no_sync():
    events = [
        op("aten::item", 0, 100),  # AdamW's CPU step counter: no CUDA call inside
        op("aten::_local_scalar_dense", 10, 90),
        op("aten::item", 200, 300),  # a loss read from the GPU
        op("aten::_local_scalar_dense", 210, 290),
        op("cudaMemcpyAsync", 220, 230),
    ]
    counted = tally(events, device="cuda", compiled=False)
    assert counted["counts"]["host_syncs"] == 1
    assert counted["counts"]["aten_ops"] == 4  # both are still dispatched ops
    on_cpu = tally(events[:2], device="cpu", compiled=False)
    assert on_cpu["counts"]["host_syncs"] == 1  # on the CPU every .item() is counted


def test_compute_time_is_the_outermost_flop_carrying_calls_and_overlapping_kernels_count_once():
    # Times in microseconds (the profiler's nanoseconds × 1000): the record keeps ms to 3 places.
    events = [
        op("aten::linear", 0, 100000),
        op("aten::addmm", 10000, 90000, flops=1000),
        op("aten::mm", 20000, 80000, flops=1000),  # inside the addmm (a decomposition): not again
        op("aten::relu", 100000, 110000),
        op("aten::addmm", 120000, 160000, flops=500),
        op("aten::mul", 170000, 180000, flops=10),
    ]
    timing = tally(events, device="cpu", compiled=False)["timing"]
    assert timing["compute_ms"] == pytest.approx(120e-3)  # the element-wise mul is not in it
    assert timing["compute_top"] == [["aten::addmm", 0.12, 2]]
    assert timing["device_busy_ms"] is None
    kernels = [
        _Event("gemm", 0, 100000, 7, "cuda"),
        _Event("gemm", 50000, 150000, 8, "cuda"),  # another stream, overlapping
        _Event("relu", 300000, 310000, 7, "cuda"),
    ]
    on_gpu = tally([op("aten::mm", 0, 5000), *kernels], device="cuda", compiled=False)["timing"]
    assert on_gpu["device_busy_ms"] == pytest.approx(160e-3)
    assert on_gpu["compute_ms"] == pytest.approx(210e-3)
    assert on_gpu["compute_top"][0] == ["gemm", pytest.approx(200e-3), 2]


def test_allocations_count_on_the_steps_device_per_innermost_op():
    events = [
        op("aten::empty_like", 0, 50),
        op("aten::empty_strided", 10, 20),
        alloc(15, 64),
        alloc(30, 32),  # inside empty_like, after empty_strided returned
        alloc(60, 8),  # outside any op (a Python scalar wrapped before dispatch)
        alloc(16, -64),  # a free
        alloc(70, 1024, device="cuda"),  # another device's
        op("## Call CompiledFxGraph fabc123 ##", 100, 200),
        alloc(150, 16),
    ]
    counted = tally(events, device="cpu", compiled=False)
    assert counted["counts"]["allocations"] == 4
    assert counted["counts"]["allocated_bytes"] == 120
    assert counted["top"]["allocations"] == [
        ["## Call CompiledFxGraph ##", 1],  # the graph's hash is no name
        ["(outside any op)", 1],
        ["aten::empty_like", 1],
        ["aten::empty_strided", 1],
    ]


def test_each_thread_nests_on_its_own():
    """The autograd engine's thread runs backward on a GPU: an op there is not inside a
    region of the main thread that spans the same time."""
    events = [
        op("Torch-Compiled Region: 0/0", 0, 100, thread=1),
        op("aten::mm", 10, 20, thread=2),
    ]
    assert tally(events, device="cpu", compiled=True)["counts"]["aten_ops"] == 1


# --- real eager steps, planted ------------------------------------------------------------


def mlp_step(plant: str = "") -> TrainingStep:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if plant == "optimizer_twice":
        one_pass = optimizer.step

        def twice(*args, **kwargs):
            one_pass()
            return one_pass()

        optimizer.step = twice  # type: ignore[method-assign]
    xs, ys, w = torch.randn(4, 8, 16), torch.randint(0, 4, (4, 8)), torch.randn(4, 4)

    def loss(model, inputs):
        x, y = inputs
        out = model(x)
        if plant == "matmul":
            out = out @ w
        if plant == "clones":
            out = out.clone().clone().clone()
        if plant == "item":
            out.sum().item()
        return torch.nn.functional.cross_entropy(out, y)

    parts = StepParts(
        model=model, optimizer=optimizer, batch=lambda i: (xs[i % 4], ys[i % 4]), loss=loss
    )
    step = TrainingStep(parts, device="cpu")
    for index in range(2):
        step(index)
    return step


def test_an_eager_items_line_is_recorded_where_the_code_calls_it():
    from pathlib import Path

    from compilegate.child.dynamo_logs import PathClassifier

    here = Path(__file__)
    paths = PathClassifier.for_torch(here.parent)
    planted = count_step_work(mlp_step("item"), 2, paths)
    line = next(
        number
        for number, text in enumerate(here.read_text().splitlines(), start=1)
        if text.strip() == "out.sum().item()"
    )
    assert planted["sync_sites"] == [[f"{here.name}:{line}", 1]]
    check_step_work(planted, "step_work")
    assert count_step_work(mlp_step(), 2, paths)["sync_sites"] == []
    assert "sync_sites" not in count_step_work(mlp_step(), 2)  # no classifier: not taken


def moved(plant: str) -> dict[str, dict]:
    """What `plant` changes, per count: {"count": Δ, "names": {name: Δ}} for counts that
    moved."""
    base, planted = count_step_work(mlp_step(), 2), count_step_work(mlp_step(plant), 2)
    out = {}
    for key in STEP_WORK_COUNTS:
        a, b = base["counts"][key], planted["counts"][key]
        if a != b:
            before, after = dict(base["top"].get(key, [])), dict(planted["top"].get(key, []))
            names = {
                n: after.get(n, 0) - before.get(n, 0)
                for n in sorted(set(before) | set(after))
                if after.get(n, 0) != before.get(n, 0)
            }
            out[key] = {"count": b - a, "names": names}
    return out


def counted_part(record: dict) -> dict:
    """A record without its `timing` (times of the profiled iteration, which vary)."""
    return {key: value for key, value in record.items() if key != "timing"}


def test_the_counts_of_one_step_are_the_same_twice_and_leave_the_weights_alone():
    first, second = mlp_step(), mlp_step()
    assert counted_part(count_step_work(first, 2)) == counted_part(count_step_work(second, 2))
    assert count_step_work(first, 2)["batch_index"] == 2
    taken = count_step_work(first, 2)
    check_step_work(taken, "step_work")  # the timing too, as the parent reads it
    assert taken["timing"]["dispatch_us"] > 0
    assert 0 < taken["timing"]["compute_ms"] <= taken["timing"]["profiled_ms"]
    assert taken["timing"]["compute_top"][0][0] in ("aten::addmm", "aten::mm")
    assert all(
        taken["counts"][key] is not None
        for key in STEP_WORK_COUNTS
        if key not in ("kernels", "cuda_graph_replays")
    )
    assert taken["counts"]["compiled_region_calls"] == 0
    assert taken["counts"]["host_syncs"] == 0  # the pass runs without the loop's loss check


def test_an_item_per_step_is_one_host_sync():
    change = moved("item")
    assert change["host_syncs"] == {"count": 1, "names": {"aten::_local_scalar_dense": 1}}
    assert change["aten_ops"]["names"]["aten::item"] == 1
    assert "flops" not in change


def test_a_redundant_matmul_in_the_loss_is_two_more_mms_and_their_flops():
    change = moved("matmul")
    assert change["aten_ops"]["names"]["aten::mm"] == 2  # forward, and its input's grad
    # 2 mms of (8x4)@(4x4), 2*8*4*4 FLOPs each
    assert change["flops"] == {"count": 512, "names": {"aten::mm": 512}}
    assert change["allocations"]["count"] == 2
    assert "host_syncs" not in change


def test_three_clones_of_the_output_are_three_allocations_of_its_size():
    change = moved("clones")
    assert change["aten_ops"]["names"]["aten::clone"] == 3
    assert change["allocations"]["count"] == 3
    assert change["allocated_bytes"]["count"] == 3 * 8 * 4 * 4  # 3 copies of 8x4 floats
    assert set(change) == {"aten_ops", "allocations", "allocated_bytes"}


def test_an_extra_optimizer_pass_is_one_more_update_per_parameter():
    change = moved("optimizer_twice")
    assert change == {"aten_ops": {"count": 4, "names": {"aten::add_": 4}}}  # 4 parameters


def test_a_pass_that_fails_says_why_for_every_count():
    step = mlp_step()
    step.parts.batch = lambda index: (_ for _ in ()).throw(RuntimeError("no data"))
    counted = count_step_work(step, 3)
    assert counted["counts"] == {key: None for key in STEP_WORK_COUNTS}
    check_step_work(counted, "step_work")
    # A code per count and torch's exception beside it, worded by the report as it was said.
    assert set(counted["absent"].values()) == {"count_pass_failed"}
    work = StepWork(**{**counted, "counts": StepWorkCounts(**counted["counts"])})
    work = dataclasses.replace(work, absent={k: Absence(v) for k, v in work.absent.items()})
    said = step_work_absent_words(work)
    assert set(said.values()) == {"the count pass failed: RuntimeError: no data"}


def test_a_forged_timing_or_sync_site_is_refused_at_the_parents_door():
    from compilegate.child.protocol import ReportError

    record = count_step_work(mlp_step(), 2)
    for forged in (
        {**record, "timing": {**record["timing"], "profiled_ms": -1}},
        {**record, "timing": {**record["timing"], "extra": 1}},
        {**record, "timing": {**record["timing"], "compute_top": [["x", "1", 2]]}},
        {**record, "sync_sites": [["model.py:1", -1]]},
        {**record, "sync_sites": "model.py:1"},
    ):
        with pytest.raises(ReportError):
            check_step_work(forged, "step_work")
    check_step_work(record, "step_work")
