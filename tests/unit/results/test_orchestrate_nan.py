"""A measurement that is not a finite number becomes a visible error of that variant (or of
the step, for eager) in the result, which is still written, valid and complete otherwise."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import MappingProxyType

from test_result import ENVIRONMENT, child_output, timed

from compilegate.child.protocol import ChildReport, ChildSpec, EntryPoint
from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import said_error
from compilegate.results.document import new_document, write_document
from compilegate.results.step_record import StepRecord
from compilegate.run.child_process import ChildOutcome
from compilegate.run.step_measurement import StepSide, measure_step
from compilegate.schemas import validation_errors

CONFIG = (
    "version: 1\nsteps:\n  - name: s\n    entry: a.py:f\n    eager_processes: 1\n"
    "    variant_processes: 1\n"
    "    numerics: {enabled: false}\n    variants:\n"
    "      - {mode: default}\n      - {mode: default, dynamic: true}\n"
)


class FakeLauncher:
    """Answers eager and variant children from canned documents, in order."""

    python = "python"  # the other members of a run.launcher.Launcher
    host_env = MappingProxyType({"PATH": "/bin"})
    stream = sys.stderr
    shares_host_paths = False
    children_local = True
    shared_cache_dir = None

    def __init__(self, *documents: dict) -> None:
        self.documents = list(documents)

    def run(self, spec: ChildSpec, *, label: str, timeout_s: float, **_: object) -> ChildOutcome:
        return ChildOutcome(report=ChildReport.from_json(self.documents.pop(0)), cause=None)


def eager_child(median_ms: float) -> dict:
    timing = {"eager": timed(median_ms), "eager_b": timed(median_ms, seed=9)}
    eager = {"warmup_s": [0.1], "peak_bytes": None, "timed": timing}
    return {"status": "ok", "device": "cpu", "eager": eager}


def measure(tmp_path: Path, *documents: dict) -> dict:
    (tmp_path / "c.yml").write_text(CONFIG)
    step = load_config_file(tmp_path / "c.yml").steps[0]
    record = StepRecord(step)
    entry = EntryPoint("a.py:f", "a.py", "f", 1)
    side = StepSide(step, entry, tmp_path, FakeLauncher(*documents), record)
    measure_step([side], stream=io.StringIO())
    step_doc = record.to_json()
    document = new_document(ENVIRONMENT, "c.yml", "abc", ("s",)).to_json()
    document["steps"].append(step_doc)
    write_document(document, tmp_path / "result.json")  # must not raise
    assert validation_errors(document, "result") == []
    return step_doc


def test_a_nan_variant_is_an_error_and_the_others_are_kept(tmp_path: Path) -> None:
    broken = {"status": "ok", **child_output(10.0, 5.0)}
    broken["variant"]["timed"]["compiled"]["samples"][3] = float("nan")
    broken["variant"]["warmup_s"][0] = float("nan")
    fine = {"status": "ok", **child_output(10.0, 5.0)}
    step_doc = measure(tmp_path, eager_child(10.0), broken, fine)
    first, second = step_doc["variants"]
    assert first["status"] == "error"
    said = said_error(first)
    assert said is not None
    assert said.startswith("the measurement produced NaN at warmup_s[0] (and 1 more)")
    # the facts recorded, no sentence: the error keeps the cause's code (no text of others)
    assert first["failure"]["figures"]["key"] == "warmup_s[0]" and first["error"] == "not_finite"
    assert second["status"] == "ok"


def test_a_nan_eager_time_fails_the_step_visibly(tmp_path: Path) -> None:
    eager = eager_child(10.0)
    eager["eager"]["timed"]["eager"]["samples"] = [float("inf")] * 40
    step_doc = measure(tmp_path, eager)
    assert step_doc["status"] == "error"
    said = said_error(step_doc)
    assert said is not None and said.startswith("eager: the measurement produced ")
    assert "Infinity at eager.timed.eager.samples[0] (and 39 more)" in said
    assert step_doc["failure"]["stage"] == "eager" and step_doc["error"] == "not_finite"
    assert {v["status"] for v in step_doc["variants"]} == {"error"}
