"""A step as the run measures it (results/step_record.py): a value, written through to_json."""

from __future__ import annotations

from pathlib import Path

from test_result import ENVIRONMENT, child_output, make_record, parts

from compilegate.config import Variant
from compilegate.config.loading import load_config_file
from compilegate.results.document import finish_step, new_document, step_skeleton, variant_entry
from compilegate.results.model import Status, step_of
from compilegate.results.step_record import StepRecord, not_run
from compilegate.schemas import validation_errors


def _document(record: StepRecord) -> dict:
    doc = new_document(ENVIRONMENT, "compilegate.yml", "abc", (record.name,)).to_json()
    doc["steps"].append(record.to_json())
    return doc


def test_a_half_measured_step_is_a_valid_step_that_keeps_what_it_measured(tmp_path: Path) -> None:
    """What a killed run leaves: eager and the first variant measured, the second not yet."""
    record = make_record(tmp_path)
    record.variants = record.variants[:1]
    doc = _document(record)
    assert validation_errors(doc, "result") == []
    written = doc["steps"][0]
    assert written["eager"]["step_ms"]["median"] == record.eager.step_ms.median
    assert written["variants"][0]["speedup"]["median"] > 1.5  # 10 ms eager, 5 ms compiled
    assert "recommendation" not in written, "no summary before every process reported"
    assert step_of(written).eager == record.as_step().eager


def test_the_summary_goes_into_the_record_once_and_the_step_reads_it(tmp_path: Path) -> None:
    record = make_record(tmp_path)
    record.summarize(finish_step(record.as_step()))
    written = record.to_json()
    assert written["recommendation"]["variant"] == "default"
    assert written["variants"][0]["payoff"]["decision"] == "compile"
    assert validation_errors(_document(record), "result") == []


def test_a_step_not_run_is_an_error_on_the_step_and_every_variant(tmp_path: Path) -> None:
    (tmp_path / "c.yml").write_text(
        "version: 1\nsteps:\n  - name: s\n    entry: a.py:f\n    variants:\n"
        "      - {mode: default}\n      - {mode: max-autotune}\n"
    )
    step = load_config_file(tmp_path / "c.yml").steps[0]
    record = not_run(step, "not run: the run ended before this step")
    assert record.status is Status.ERROR
    assert [v.error for v in record.variants] == [record.error] * 2
    assert StepRecord(step).to_json() == step_skeleton(step)
    assert validation_errors(_document(record), "result") == []


def test_the_run_writes_the_nulls_it_always_recorded_and_a_read_document_keeps_its_own() -> None:
    """A variant that ran records `late_recompile_s` as null; the same value read from a
    document that left it out writes it out left out."""
    variant = Variant.from_dict({"mode": "default"})
    entry = variant_entry(variant, *parts(child_output(10.0, 5.0)))
    assert entry.late_recompile_s is None
    recorded = entry.to_json(as_recorded=True)
    assert "late_recompile_s" in recorded and recorded["late_recompile_s"] is None
    assert "late_recompile_s" not in entry.to_json()
