"""Item 13 with real processes: SIGINT or SIGTERM during a run kills the running child (its
own session does not get the terminal's Ctrl-C), removes its folder only after it is dead,
writes the result with what was measured and exits 128 + the signal's number."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import REPO_ROOT, TORCH_PYTHON, write_config

from compilegate.report.child_failure_words import said_error
from compilegate.schemas import validation_errors


def _children_of(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            found.append(int(status.parent.name))
    return found


def _folder_of(pid: int) -> Path:
    """A child's folder: its HOME's parent (the launcher's fresh folder)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    home = next(v for v in environ if v.startswith(b"HOME=")).decode()[len("HOME=") :]
    return Path(home).parent


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in state


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the child")
@pytest.mark.parametrize(
    ("signal_number", "exit_code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)]
)
def test_a_signal_kills_the_child_keeps_the_result_and_exits_128_plus_n(
    tmp_path: Path, signal_number: int, exit_code: int
) -> None:
    body = (
        "  - name: good\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        + QUICK
        + "  - name: sleeps\n    entry: examples/test_steps/bad_steps.py:make_sleeping\n"
        + QUICK
        + "    timeout_s: 300\n"
        + "  - name: after\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        + QUICK
    )
    config = write_config(tmp_path / "c.yml", body)
    out = tmp_path / "r.json"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "compilegate",
            "run",
            "--config",
            str(config),
            "--repo",
            str(REPO_ROOT),
            "--out",
            str(out),
            "--python",
            TORCH_PYTHON,
            "--verbose",  # the phase lines this test waits for
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in parent.stderr], daemon=True).start()
    seen = []
    deadline = time.monotonic() + 600
    try:
        while not any("sleeps/eager#1" in x and "importing the step factory" in x for x in seen):
            assert time.monotonic() < deadline and parent.poll() is None, "".join(seen)
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                pass
        time.sleep(1.0)  # the factory is sleeping now
        # The child, and the one started ahead beside it (run/launcher.py), if it has begun.
        children = _children_of(parent.pid)
        assert 1 <= len(children) <= 2, children
        folders = [_folder_of(pid) for pid in children]
        assert all(f.name.startswith("compilegate-") and f.is_dir() for f in folders), folders
        parent.send_signal(signal_number)
        parent.wait(timeout=60)
    finally:
        if parent.poll() is None:
            parent.kill()
    stdout = parent.stdout.read()
    time.sleep(0.2)
    stderr = "".join(seen) + "".join(iter(lambda: _get(lines), None))
    assert parent.returncode == exit_code, stderr
    assert not any(_alive(pid) for pid in children), "a child outlived its parent"
    assert not any(folder.exists() for folder in folders)
    name = signal.Signals(signal_number).name
    assert f"compilegate: interrupted by {name}; what was measured is in {out}" in stderr
    assert "Traceback" not in stderr + stdout
    document = json.loads(out.read_text())
    assert validation_errors(document, "result") == []
    good, sleeps, after = document["steps"]
    assert good["status"] == "ok" and good["variants"][0]["status"] == "ok"
    assert sleeps["status"] == "error" and said_error(sleeps) == f"eager: interrupted ({name})"
    assert after["status"] == "error" and "not run" in str(said_error(after))
    assert all(v["status"] == "error" for v in sleeps["variants"] + after["variants"])


def _get(lines: queue.Queue[str]) -> str | None:
    try:
        return lines.get(timeout=0.5)
    except queue.Empty:
        return None
