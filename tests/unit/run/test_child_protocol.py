"""The spec a parent sends its child: one typed document, read once at the child's door."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from compilegate.child.protocol import (
    STEP_WORK_COUNTS,
    ChildReport,
    ChildSide,
    ChildSpec,
    EntryPoint,
    Phase,
    ReportError,
    SpecError,
)
from compilegate.report.child_failure_words import cause_text
from compilegate.run.child_failure import BadResult
from compilegate.run.launcher import read_report

ENTRY = EntryPoint("step.py:make", "/repo/step.py", "make", 3)
VARIANT = {"id": "default", "compile_kwargs": {}, "compile_target": "module"}
SETTINGS = {"seed": 0, "warmup": 2, "iterations": 4, "rounds": 2, "numerics": {"enabled": True}}


def eager(**changes) -> ChildSpec:
    fields = {"repo_root": "/repo", "entry": ENTRY, "step": "s", "device": "cpu"}
    return ChildSpec(kind="eager", settings=SETTINGS, **{**fields, **changes})


@pytest.mark.parametrize(
    "spec",
    [
        ChildSpec(kind="probe", out="/h/out.json", label="probe", progress_token="ab"),
        eager(numerics_reference_out="/tmp/ref.pt", limits={"memory_mib": 100}),
        ChildSpec(
            kind="variant",
            repo_root="/repo",
            entry=ENTRY,
            device="cpu",
            settings=SETTINGS,
            variant=VARIANT,
            numerics_reference="/tmp/ref.pt",
            timing_only=True,
        ),
        ChildSpec(
            kind="pair",
            repo_root="/head",
            entry=ENTRY,
            device="cpu",
            settings=SETTINGS,
            sides=(
                ChildSide("base", "/base", ENTRY),
                ChildSide("head", "/head", ENTRY, VARIANT, "/cache"),
            ),
        ),
    ],
    ids=["probe", "eager", "variant", "pair"],
)
def test_what_the_parent_writes_the_child_reads_back_unchanged(spec: ChildSpec) -> None:
    sent = json.loads(json.dumps(spec.to_json()))
    assert ChildSpec.from_json(sent) == spec


def test_a_spec_leaves_out_what_is_at_its_default() -> None:
    assert ChildSpec(kind="probe").to_json() == {"kind": "probe"}
    assert "timing_only" not in eager().to_json()


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"kind": "eager", "repo_root": "/r"}, "(eager): missing entry, device, settings"),
        ({"kind": "measure"}, "kind 'measure' is none of probe, eager, variant, pair"),
        ({"kind": "probe", "numerics": {}}, "child spec: unknown key numerics"),
        ({"out": "/o"}, "child spec: missing kind"),
        ([], "child spec: not a JSON object"),
        ({"kind": "probe", "timing_only": "yes"}, "timing_only is not true or false"),
        ({"kind": "probe", "settings": []}, "settings is not a JSON object"),
        ({**eager().to_json(), "entry": {"spec": "s"}}, "entry: missing file, function, line"),
        ({**eager().to_json(), "kind": "pair"}, "child spec (pair): missing sides"),
        ({**eager().to_json(), "settings": None}, "child spec (eager): missing settings"),
        (
            {**eager().to_json(), "kind": "pair", "sides": [{"role": "base", "tree": "/b"}]},
            "sides[]: unknown key tree",
        ),
    ],
)
def test_a_spec_the_child_cannot_read_names_what_is_wrong(raw: object, reason: str) -> None:
    with pytest.raises(SpecError, match=re.escape(reason)):
        ChildSpec.from_json(raw)


def step_work_record(**changes: Any) -> dict[str, Any]:
    """A step-work record as child/step_work.py writes it on the CPU; `counts`, `absent`
    and `top` changes merge into its own."""
    counts = {key: 1 for key in STEP_WORK_COUNTS} | {"kernels": None, "cuda_graph_replays": None}
    record: dict[str, Any] = {
        "counts": counts | changes.pop("counts", {}),
        "absent": {"kernels": "cpu", "cuda_graph_replays": "cpu"} | changes.pop("absent", {}),
        "top": {"aten_ops": [["aten::mm", 1]]} | changes.pop("top", {}),
        "batch_index": 5,
    }
    return record | changes


def with_step_work(drop: str = "", **changes: Any) -> dict[str, Any]:
    """A report whose variant carries a step-work record, changed; `drop`: a key left out
    of the record or of its counts."""
    record = step_work_record(**changes)
    record.pop(drop, None)
    record["counts"].pop(drop, None)
    return {"status": "ok", "variant": {"step_work": record}}


def test_a_report_with_step_work_comes_back_as_it_was_written() -> None:
    measured = {"status": "ok", "error": None, "eager": {"step_work": step_work_record()}}
    assert ChildReport.from_json(measured).to_json() == measured


def test_a_report_comes_back_as_it_was_written() -> None:
    measured = {"status": "ok", "error": None, "device": "cpu", "variant": {"timed": {}}}
    assert ChildReport.from_json(measured).to_json() == measured
    failed = {"status": "error", "error": "building: boom", "phase": "build", "doing": "building"}
    report = ChildReport.from_json(failed)
    assert report == ChildReport("error", "building: boom", Phase.BUILD, "building")
    assert report.to_json() == failed


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("ok", "not a JSON object"),
        ({"status": "ok", "steps": []}, "unknown key steps"),
        ({"status": "done"}, "status 'done' is neither ok nor error"),
        ({"error": "x"}, "status None is neither ok nor error"),
        ({"status": "ok", "variant": [1]}, "variant is not a JSON object"),
        ({"status": "error", "error": 3}, "error is not a string"),
        (with_step_work(extra=1), "variant.step_work: unknown key extra"),
        (with_step_work(drop="top"), "variant.step_work: missing top"),
        (with_step_work(drop="flops"), "variant.step_work.counts: missing flops"),
        (
            with_step_work(counts={"aten_ops": -1}),
            "variant.step_work.counts.aten_ops is not an integer >= 0 or null",
        ),
        (
            with_step_work(counts={"aten_ops": True}),
            "variant.step_work.counts.aten_ops is not an integer >= 0 or null",
        ),
        (with_step_work(counts={"mystery": 1}), "variant.step_work.counts: unknown key mystery"),
        (
            with_step_work(counts={"aten_ops": None}),
            "variant.step_work.counts.aten_ops: absent exactly when null, with a reason",
        ),
        (
            with_step_work(absent={"flops": "?"}),
            "variant.step_work.counts.flops: absent exactly when null, with a reason",
        ),
        (
            with_step_work(top={"aten_ops": [["aten::mm"]]}),
            "variant.step_work.top.aten_ops is not a list of [name, count] of a count",
        ),
        (
            with_step_work(top={"kernels": [["k", 1]]}),
            "variant.step_work.top.kernels is not a list of [name, count] of a count",
        ),
        (
            with_step_work(batch_index="5"),
            "variant.step_work.batch_index is not an integer >= 0",
        ),
    ],
)
def test_a_report_the_parent_cannot_read_is_that_childs_error(raw: object, reason: str) -> None:
    with pytest.raises(ReportError, match=re.escape(reason)):
        ChildReport.from_json(raw)
    report, cause = read_report(raw)
    assert report is None and cause == BadResult("unparsable", reason)
    said = cause_text(cause)
    assert said == f"child process wrote a result the parent cannot read: {reason}"
