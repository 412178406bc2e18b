"""`compilegate run` without `--out` writes outside the repository (results/location.py) and
says where in one line: the real CLI on a step that does not compile (backend eager)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_helpers import QUICK_STEP_SETTINGS, REPO_ROOT, run_cli, write_config

from compilegate.results.location import default_result_path


def _untracked(root: Path) -> set[str]:
    done = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return {line[3:] for line in done.stdout.splitlines() if line.startswith("??")}


def test_a_run_without_out_leaves_nothing_in_the_repository(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "compilegate.yml",
        "  - name: quick\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        "    device: cpu\n    threads: 1\n" + QUICK_STEP_SETTINGS,
    )
    before = _untracked(REPO_ROOT)
    env = {"HOME": str(tmp_path / "home"), "GITHUB_ACTIONS": "", "XDG_CACHE_HOME": ""}
    run = run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), env=env)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    expected = default_result_path(REPO_ROOT, {**os.environ, **env})
    assert str(expected).startswith(str(tmp_path / "home" / ".cache" / "compilegate"))
    assert json.loads(expected.read_text())["steps"][0]["name"] == "quick"
    assert f"result written to {expected}" in run.stdout.splitlines()
    assert _untracked(REPO_ROOT) == before
