"""The step-work keys are declared in child/protocol.py (what a child may send), typed in
results/model.py (StepWork, StepWorkCounts, StepWorkTiming: the door's fields) and listed in
schemas/result.schema.json (the public contract). One tuple cannot serve all three: the
parent's wings never import the child and the child imports nothing of theirs
(tests/unit/test_layout.py), and the schema is JSON. So they are held equal here, every
place the schema lists a count included: a key added to one and not the others fails."""

from __future__ import annotations

import dataclasses

import pytest

from compilegate.child import protocol
from compilegate.results import bisect, model
from compilegate.schemas import load_schema

STEP_WORK = load_schema("result")["$defs"]["stepWork"]


def field_names(cls: type) -> tuple[str, ...]:
    return tuple(item.name for item in dataclasses.fields(cls))


def test_the_counts_are_one_list_in_child_results_and_schema() -> None:
    counts = protocol.STEP_WORK_COUNTS
    assert field_names(model.StepWorkCounts) == counts
    assert model.StepWorkCounts.REQUIRED == counts
    schema_counts = STEP_WORK["properties"]["counts"]
    assert tuple(schema_counts["required"]) == counts
    assert tuple(schema_counts["properties"]) == counts
    for keyed_by_count in ("absent", "top"):
        names = STEP_WORK["properties"][keyed_by_count]["propertyNames"]["enum"]
        assert tuple(names) == counts, keyed_by_count
    # a bisection lists them in its answer's order (results/bisect.py), the same counts
    assert sorted(bisect.STEP_WORK_COUNTS) == sorted(counts)


def test_the_record_keys_are_one_list_in_child_results_and_schema() -> None:
    required, optional = protocol.STEP_WORK_KEYS, protocol.STEP_WORK_OPTIONAL
    assert field_names(model.StepWork) == (*required, *optional)
    assert tuple(STEP_WORK["required"]) == required
    assert sorted(STEP_WORK["properties"]) == sorted((*required, *optional))


def test_the_timing_keys_are_one_list_in_child_results_and_schema() -> None:
    timing = protocol.STEP_WORK_TIMING
    assert field_names(model.StepWorkTiming) == timing
    schema_timing = STEP_WORK["properties"]["timing"]
    assert tuple(schema_timing["required"]) == timing
    assert tuple(schema_timing["properties"]) == timing


def test_the_child_reads_the_declared_optional_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """check_step_work refuses a key outside the declared lists and reads the optional ones
    from STEP_WORK_OPTIONAL, not from a list of its own."""
    record = {
        "counts": dict.fromkeys(protocol.STEP_WORK_COUNTS, 0),
        "absent": {},
        "top": {},
        "batch_index": 0,
    }
    protocol.check_step_work(record, "step_work")
    with pytest.raises(protocol.ReportError, match=r"^step_work: unknown key extra$"):
        protocol.check_step_work({**record, "extra": 1}, "step_work")
    monkeypatch.setattr(protocol, "STEP_WORK_OPTIONAL", ("sync_sites",))
    with pytest.raises(protocol.ReportError, match=r"^step_work: unknown key timing$"):
        protocol.check_step_work({**record, "timing": {}}, "step_work")
