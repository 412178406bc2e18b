"""The orchestration with a stand-in launcher (no child processes): one variant's failure,
in the child or in the parent while recording it, never ends the run; an interruption keeps
what was measured and marks what it cut short."""

from __future__ import annotations

import io
import json
import signal
import sys
from pathlib import Path

import pytest
from test_result import ENV, child_output, timed

from compilegate.child.protocol import ChildReport, ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.errors import RunInterrupted
from compilegate.report.child_failure_words import said_error
from compilegate.results import document as result_document
from compilegate.run import step_measurement
from compilegate.run.child_process import ChildOutcome
from compilegate.run.orchestrate import RunOptions, run_config
from compilegate.schemas import validation_errors

CONFIG = """\
version: 1
steps:
  - name: first
    entry: step.py:make_step
    variants: [{mode: default, name: a}, {mode: default, name: b}, {mode: default, name: c}]
    eager_processes: 1
    env: [HF_HOME]
  - name: second
    entry: step.py:make_step
    variants: [{mode: default, name: a}]
    eager_processes: 1
"""


class StandInLauncher:
    """Answers like ChildLauncher.run; `interrupt_at` raises on that label instead."""

    python = "python"  # the other members of a run.launcher.Launcher
    stream = sys.stderr
    shares_host_paths = False
    children_local = True

    def __init__(self, interrupt_at: str | None = None, error: type = RunInterrupted) -> None:
        self.host_env = {"PATH": "/bin", "OMP_NUM_THREADS": "2", "GITHUB_TOKEN": "x"}
        self.interrupt_at, self.error = interrupt_at, error
        self.calls: list[tuple[str, tuple[str, ...]]] = []
        self.shared_cache_dir = None

    def run(self, spec: ChildSpec, *, label: str, timeout_s: float, env_opt_in=(), cache_dir=None):
        spec = spec.to_json()  # what the child would read
        self.calls.append((label, tuple(env_opt_in)))
        if label == self.interrupt_at:
            raise self.error(signal.SIGTERM) if self.error is RunInterrupted else self.error()
        if spec["kind"] == "probe":
            return ChildOutcome(
                ChildReport.from_json({"status": "ok", "environment": dict(ENV)}), None
            )
        if spec["kind"] == "eager":
            eager = {
                "warmup_s": [0.1],
                "peak_bytes": None,
                "timed": {"eager": timed(10), "eager_b": timed(10, seed=9)},
            }
            return ChildOutcome(
                ChildReport.from_json({"status": "ok", "device": "cpu", "eager": eager}), None
            )
        return ChildOutcome(
            ChildReport.from_json({"status": "ok", **child_output(10.0, 5.0)}), None
        )


def run(tmp_path: Path, launcher: StandInLauncher) -> dict:
    (tmp_path / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    (tmp_path / "compilegate.yml").write_text(CONFIG)
    config = load_config_file(tmp_path / "compilegate.yml")
    options = RunOptions(tmp_path / "r.json", stream=io.StringIO(), launcher=launcher)
    return run_config(config, options)


def test_each_child_gets_its_steps_opt_in_and_the_host_is_recorded(tmp_path: Path) -> None:
    launcher = StandInLauncher()
    document = run(tmp_path, launcher)
    assert ("first/a", ("HF_HOME",)) in launcher.calls
    assert ("second/a", ()) in launcher.calls
    assert ("probe", ()) in launcher.calls
    assert document["environment"]["measurement_env"] == {"OMP_NUM_THREADS": "2"}
    assert document["steps"][0]["settings"]["env"] == ["HF_HOME"]
    assert validation_errors(document, "result") == []


def test_a_parent_side_failure_recording_one_variant_is_that_variants_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = result_document.variant_entry

    def breaks_on_b(variant, *report):
        if variant.id == "b":
            raise KeyError("speedup")
        return real(variant, *report)

    monkeypatch.setattr(step_measurement, "variant_entry", breaks_on_b)
    document = run(tmp_path, StandInLauncher())
    first, second = document["steps"]
    a, b, c = first["variants"]
    assert a["status"] == "ok" and c["status"] == "ok", "the others still ran"
    assert b["status"] == "error"
    assert said_error(b) == "compilegate could not record this measurement: KeyError: 'speedup'"
    assert b["error"] == "KeyError: 'speedup'" and b["failure"]["cause"] == "not_recorded"
    assert second["status"] == "ok"
    assert validation_errors(document, "result") == []


def test_a_parent_side_failure_recording_eager_is_that_steps_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(measured):
        raise ValueError("no samples")

    monkeypatch.setattr(step_measurement, "eager_entry", broken)
    first, second = run(tmp_path, StandInLauncher())["steps"]
    assert first["status"] == "error" and "ValueError: no samples" in str(said_error(first))
    assert all(said_error(v) == "not run: the step failed eagerly" for v in first["variants"])
    assert second["status"] == "error", "same failure, its own error"


@pytest.mark.parametrize(
    ("error", "name"), [(RunInterrupted, "SIGTERM"), (KeyboardInterrupt, "SIGINT")]
)
def test_an_interruption_marks_the_variant_and_writes_what_was_measured(
    tmp_path: Path, error: type, name: str
) -> None:
    launcher = StandInLauncher(interrupt_at="first/b", error=error)
    with pytest.raises(RunInterrupted) as info:
        run(tmp_path, launcher)
    assert info.value.exit_code == 128 + signal.Signals[name].value
    assert info.value.result_path == str(tmp_path / "r.json")
    document = json.loads((tmp_path / "r.json").read_text())
    assert validation_errors(document, "result") == []
    first, second = document["steps"]
    a, b, c = first["variants"]
    assert a["status"] == "ok"
    assert b["status"] == "error" and said_error(b) == f"interrupted ({name})"
    assert said_error(c) == f"not run: the run was interrupted ({name})"
    assert c["status"] == "error" and c["failure"]["signal"] == name
    assert second["status"] == "error" and "not run" in str(said_error(second))
    assert [label for label, _ in launcher.calls][-1] == "first/b", "nothing ran after it"


def test_an_interruption_during_eager_marks_the_step(tmp_path: Path) -> None:
    with pytest.raises(RunInterrupted):
        run(tmp_path, StandInLauncher(interrupt_at="first/eager#1"))
    first, second = json.loads((tmp_path / "r.json").read_text())["steps"]
    assert said_error(first) == "eager: interrupted (SIGTERM)"
    assert said_error(second) == "not run: the run was interrupted (SIGTERM)"


def test_an_interruption_of_the_probe_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(RunInterrupted) as info:
        run(tmp_path, StandInLauncher(interrupt_at="probe"))
    assert info.value.result_path is None
    assert not (tmp_path / "r.json").exists()
