"""The door in (results/model.parse): a bad document is one line naming the file and the
key, exit 2; an older baseline shape reads as a baseline; what comes in is read as
attributes."""

from __future__ import annotations

import copy

import pytest
from gate_docs import result, step, variant

from compilegate.errors import EXIT_USAGE, BaselineError
from compilegate.gate.documents import read_document
from compilegate.results import model


def refused(raw, role: str = "result") -> str:
    with pytest.raises(BaselineError) as caught:
        model.parse(raw, "runs/result.json", role)
    assert caught.value.exit_code == EXIT_USAGE
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("runs/result.json: ")
    return message


def test_a_valid_document_reads_as_attributes():
    doc = model.parse(result(step(variants=[variant(speedup=1.4)])), "result.json")
    train = doc.step("train")
    assert train is not None and train.status is model.Status.OK
    default = train.variant("default")
    assert default is not None and default.speedup is not None
    assert default.speedup.median == 1.4
    assert default.numerics is not None and default.numerics.status is model.NumericsStatus.PASS
    assert default.definition == model.VARIANT_DEFAULTS
    assert doc.environment.gpu_name == "NVIDIA H200"


def test_a_non_finite_number_names_its_key():
    raw = result(step(variants=[variant()]))
    raw["steps"][0]["variants"][0]["noise_pct"] = float("nan")
    message = refused(raw)
    assert "at steps[0].variants[0].noise_pct: NaN is not a finite number" in message


def test_a_schema_violation_names_its_key():
    raw = result()
    raw["steps"][0]["variants"][0]["speedup"] = {"median": "fast"}
    assert "at steps[0].variants[0].speedup" in refused(raw)


def test_duplicate_step_names_are_refused():
    raw = result(step("train"), step("train"))
    assert "steps[1].name: duplicate step name 'train'" in refused(raw)


def test_duplicate_variant_ids_are_refused():
    raw = result(step(variants=[variant("default"), variant("default")]))
    assert "steps[0].variants[1].id: duplicate variant 'default'" in refused(raw)


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "base.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(BaselineError, match=r"base.json: baseline is not valid JSON: .* line 1"):
        read_document(path, role="baseline")


def test_an_older_baseline_without_compile_cost_reads_as_a_baseline_only():
    raw = result()
    for entry in raw["steps"][0]["variants"]:
        del entry["compile_cost"]
        del entry["torch_state"]
    old = model.parse(copy.deepcopy(raw), "baseline.json", "baseline")
    assert old.steps[0].variants[0].compile_cost is None
    assert "'compile_cost' is a required property" in refused(raw, "result")


def test_an_unknown_role_is_a_programming_error():
    with pytest.raises(ValueError, match="role must be one of"):
        model.parse(result(), "x.json", "other")


def step_work(aten_ops: int = 126, **names: int) -> dict:
    """A step-work record as a CPU run writes it (child/step_work.py)."""
    return {
        "counts": {
            "aten_ops": aten_ops,
            "compiled_region_calls": 0,
            "kernels": None,
            "cuda_graph_replays": None,
            "host_syncs": 1,
            "flops": 71680,
            "allocations": 21,
            "allocated_bytes": 15644,
        },
        "absent": {"kernels": "no device kernels on the CPU", "cuda_graph_replays": "CUDA only"},
        "top": {
            "aten_ops": [["aten::mm", 6], *([name, n] for name, n in names.items())],
            "host_syncs": [["aten::_local_scalar_dense", 1]],
        },
        "batch_index": 5,
    }


def with_step_work(eager_work: dict, variant_work: dict) -> dict:
    raw = result()
    raw["steps"][0]["eager"]["step_work"] = eager_work
    raw["steps"][0]["variants"][0]["step_work"] = variant_work
    return raw


def test_step_work_reads_as_counts_and_names_on_eager_and_variants():
    doc = model.parse(with_step_work(step_work(), step_work(40)), "result.json")
    train = doc.step("train")
    assert train is not None and train.eager is not None
    eager_work, compiled_work = train.eager.step_work, train.variants[0].step_work
    assert eager_work is not None and compiled_work is not None
    assert eager_work.counts.aten_ops == 126 and compiled_work.count("aten_ops") == 40
    assert eager_work.count("kernels") is None
    assert eager_work.absent["kernels"] == "no device kernels on the CPU"
    assert eager_work.named("host_syncs") == {"aten::_local_scalar_dense": 1}
    assert eager_work.named("kernels") == {}
    assert doc.to_json()["steps"][0]["eager"]["step_work"] == step_work()


def test_a_document_from_before_step_work_reads_it_as_not_counted():
    doc = model.parse(result(), "result.json")
    assert doc.steps[0].eager is not None and doc.steps[0].eager.step_work is None
    assert doc.steps[0].variants[0].step_work is None
    assert "step_work" not in doc.to_json()["steps"][0]["variants"][0]


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda w: w["counts"].update(mystery=1), "step_work.counts"),
        (lambda w: w["counts"].pop("flops"), "step_work.counts"),
        (lambda w: w["counts"].update(aten_ops=-1), "step_work.counts.aten_ops"),
        (lambda w: w["absent"].update(mystery="?"), "step_work.absent"),
        (lambda w: w["top"].update(aten_ops=[["aten::mm", 1, 2]]), "step_work.top.aten_ops[0]"),
        (lambda w: w.update(extra=1), "step_work"),
    ],
)
def test_a_step_work_record_of_another_shape_is_refused(change, where):
    work = step_work()
    change(work)
    assert f"at steps[0].variants[0].{where}" in refused(with_step_work(step_work(), work))


def test_a_document_of_non_finite_values_under_long_keys_names_the_first_cut():
    """Issue 51: every NaN's key path was built whole (200,000 paths of a 1 MB key); now the
    first 100, each key cut at 40 characters."""
    long_key = "K" * 4096
    raw = {long_key: {long_key: [float("nan")] * 50_000}}
    found = model.non_finite_paths(raw)
    assert len(found) == 100
    assert found[0] == (f"{'K' * 40}….{'K' * 40}…[0]", "NaN")
    message = refused(raw)
    assert message.endswith("(and at least 99 more)") and len(message) < 400


def test_duplicate_names_are_counted_to_the_first_hundred_each_shown_cut():
    steps = [{"name": "n\n" + "N" * 1000}] * 5000
    problems = model.duplicate_names({"steps": steps})
    assert len(problems) == 100
    assert problems[0].startswith("steps[1].name: duplicate step name 'n\\n")
    assert all(len(p) < 260 for p in problems)
