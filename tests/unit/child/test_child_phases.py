"""A child's phase is a field of its progress lines and of its report (protocol.Phase), never
read from their words: each process records the seconds of each phase (child/main.py
Child.progress), what bench/time_to_verdict.py and a reader of result.json split a run by,
and the parent keeps the phase a failed child was in (run/launcher.relay_output)."""

from __future__ import annotations

import collections
import io
from pathlib import Path

import pytest

from compilegate.child import main as child_main
from compilegate.child.protocol import (
    ChildReport,
    ChildSpec,
    Phase,
    ReportError,
    progress_line,
    read_progress,
)
from compilegate.run.child_process import ChildOutcome
from compilegate.run.launcher import relay_output


def test_a_progress_line_carries_its_phase_whatever_its_words():
    """Rewording a message (here one that starts like another phase's) keeps its phase."""
    line = progress_line("a1b2", Phase.NUMERICS, "s/default", 12.5, "compiling: reworded")
    progress = read_progress(line, "a1b2")
    assert progress is not None and progress.phase is Phase.NUMERICS
    assert progress.shown == "s/default [  12.5s] compiling: reworded"
    assert progress.message == "compiling: reworded"
    assert read_progress(line, "0000") is None, "another child's token: the step's output"


def test_a_phase_this_parent_does_not_know_reads_as_other():
    line = progress_line("a1b2", Phase.TIMED, "s", 1.0, "round 1/2").replace("TIMED", "WARP")
    progress = read_progress(line, "a1b2")
    assert progress is not None and progress.phase is Phase.OTHER


def test_the_parent_keeps_the_phase_field_not_the_words():
    outcome = ChildOutcome(None, None)
    lines = [
        progress_line("a1b2", Phase.COMPILE, "s", 1.0, "compiling: warm-up 1/2"),
        progress_line("a1b2", Phase.NUMERICS, "s", 9.0, "round 3 of something reworded"),
    ]
    relay_output(lines, outcome, collections.deque(), io.StringIO(), progress_token="a1b2")
    assert outcome.phase is Phase.NUMERICS
    assert outcome.doing == "round 3 of something reworded"


def test_a_report_names_its_phase_by_value_and_nothing_else():
    report = ChildReport.from_json(
        {"status": "error", "error": "x", "phase": "eager warm-up", "doing": "eager warm-up (5)"}
    )
    assert report.phase is Phase.EAGER_WARMUP and report.doing == "eager warm-up (5)"
    assert report.to_json()["phase"] == "eager warm-up"
    with pytest.raises(ReportError, match="phase 'building copies' is none of"):
        ChildReport.from_json({"status": "error", "error": "x", "phase": "building copies"})


def test_each_phase_is_charged_the_time_until_the_next_one_begins(tmp_path: Path, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(child_main.time, "perf_counter", lambda: clock[0])
    written = io.StringIO()
    monkeypatch.setattr(child_main.sys, "stderr", written)
    child = child_main.Child(ChildSpec(kind="probe", out=str(tmp_path / "out.json")))
    for advance, phase, message in [
        (3.0, Phase.IMPORT, "importing the step factory"),
        (0.5, Phase.BUILD, "building copies"),
        (1.0, Phase.COMPILE, "compiling: warm-up 1/2 includes the compile"),
        (20.0, Phase.COMPILE, "compiled warm-up 2/2: 0.01 s"),
        (0.5, Phase.TIMED, "measuring: 4 iterations per side in 2 rounds"),
        (2.0, Phase.TIMED, "base: round 1/2"),  # a paired child's side: its phase all the same
        (2.0, Phase.TIMED, "round 2/2"),
    ]:
        clock[0] += advance
        child.progress(phase, message)
    clock[0] += 4.0
    child._close_phase(Phase.OTHER)
    assert child.phases_s == {
        "start": 3.0,
        "import": 0.5,
        "build": 1.0,
        "compile": 20.5,
        "timed": 8.0,
    }
    first = written.getvalue().splitlines()[0]
    assert read_progress(first, "") == read_progress(
        progress_line("", Phase.IMPORT, "", 3.0, "importing the step factory"), ""
    )


def test_the_schema_names_every_phase():
    """One declaration: the document's failure phases are protocol.Phase's values."""
    import json

    from repo_helpers import REPO_ROOT

    schema = json.loads((REPO_ROOT / "schemas" / "result.schema.json").read_text())
    phases = schema["$defs"]["failure"]["properties"]["phase"]["enum"]
    assert phases == [*(phase.value for phase in Phase), None]
