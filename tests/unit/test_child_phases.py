"""Each process records the seconds of each phase of its work (child/main.py Child.progress,
protocol.phase_of): what bench/time_to_verdict.py and a reader of result.json split a run by."""

from __future__ import annotations

import io
from pathlib import Path

from compilegate.child import main as child_main
from compilegate.child.protocol import ChildSpec, phase_of


def test_progress_messages_name_their_phases():
    assert phase_of("importing the step factory") == "import"
    assert phase_of("compiling: warm-up 1/5 includes the compile") == "compile"
    assert phase_of("compiled warm-up 2/5: 0.01 s") == "compile"
    assert phase_of("round 3/10") == "timed"
    assert phase_of("numerics: float64 reference, once for every variant") == "reference"
    assert phase_of("numerics: compiled copy (default, the timed code), 2 step(s)") == "numerics"
    assert phase_of("something new") == "other"


def test_each_phase_is_charged_the_time_until_the_next_one_begins(tmp_path: Path, monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(child_main.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(child_main.sys, "stderr", io.StringIO())
    child = child_main.Child(ChildSpec(kind="probe", out=str(tmp_path / "out.json")))
    for advance, message in [
        (3.0, "importing the step factory"),
        (0.5, "building copies"),
        (1.0, "compiling: warm-up 1/2 includes the compile"),
        (20.0, "compiled warm-up 2/2: 0.01 s"),
        (0.5, "measuring: 4 iterations per side in 2 rounds"),
        (2.0, "round 1/2"),
        (2.0, "round 2/2"),
    ]:
        clock[0] += advance
        child.progress(message)
    clock[0] += 4.0
    child._close_phase("other")
    assert child.phases_s == {
        "start": 3.0,
        "import": 0.5,
        "build": 1.0,
        "compile": 20.5,
        "timed": 8.0,
    }
