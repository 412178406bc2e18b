"""The venv backend without installing torch: commands, reuse, the wall-clock limit."""

from __future__ import annotations

import sys
from pathlib import Path

from compilegate.containers.outcome import RunRequest
from compilegate.containers.venv_backend import (
    READY_MARKER,
    VenvBackend,
    run_command,
    run_streaming,
)


def test_run_command_measures_with_the_venv_python(tmp_path: Path) -> None:
    request = RunRequest(tmp_path / "c.yml", tmp_path, tmp_path / "out", steps=("s",))
    assert run_command("/usr/bin/python3", "/v/bin/python", request) == [
        "/usr/bin/python3", "-m", "compilegate", "run", "--config", str(tmp_path / "c.yml"),
        "--repo", str(tmp_path), "--out", str(tmp_path / "out" / "result.json"),
        "--python", "/v/bin/python", "--step", "s",
    ]  # fmt: skip


def test_a_completed_environment_is_reused(tmp_path: Path) -> None:
    backend = VenvBackend(venv_root=tmp_path, log=lambda _: None)
    venv = backend.venv_dir("2.13.0")
    venv.mkdir()
    (venv / READY_MARKER).write_text("2.13.0\n")
    assert backend.prepare("2.13.0") == str(tmp_path / "torch-2.13.0")


def test_run_gets_only_the_given_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    lines: list[str] = []
    completed = run_streaming(
        [sys.executable, "-c", "import os; print(sorted(os.environ))"],
        env={"ONLY": "1"}, timeout_s=30, prefix="[torch x]", log=lines.append,
    )  # fmt: skip
    assert completed.exit_code == 0
    assert lines[-1].startswith("[torch x] ") and "ONLY" in lines[-1]
    assert "GITHUB_TOKEN" not in lines[-1]


def test_the_limit_kills_the_process_group(tmp_path: Path) -> None:
    completed = run_streaming(
        [sys.executable, "-c", "import time; print('start', flush=True); time.sleep(60)"],
        env={}, timeout_s=1, prefix="", log=lambda _: None,
    )  # fmt: skip
    assert completed.exit_code is None and completed.wall_s < 30
    assert completed.error == "timed out after 1 s: process group killed"
