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
