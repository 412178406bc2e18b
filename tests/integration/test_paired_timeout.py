"""`matrix --paired/--against --timeout-s` on real child processes: one wall-clock limit
over every child of both sides (run/launcher.DeadlineLauncher). A run that needs far more
than the limit stops soon after it, keeps both documents, and names the limit."""

from __future__ import annotations

import io
import subprocess
import time
from pathlib import Path

from cli_helpers import REPO_ROOT
from test_run_against import CONFIG, git

from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import said_error
from compilegate.run.launcher import ChildLauncher, DeadlineLauncher
from compilegate.run.orchestrate import RunOptions
from compilegate.run.paired import run_against

LIMIT_S = 8.0


def test_the_limit_stops_a_paired_run_of_real_children(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "step.py").write_text((REPO_ROOT / "examples/test_steps/gate_step.py").read_text())
    (repo / "compilegate.yml").write_text(CONFIG.format(processes=2, extra=""))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "commit", "-q", "--allow-empty", "-m", "head")
    (tmp_path / "out").mkdir()
    launcher = DeadlineLauncher(ChildLauncher(stream=io.StringIO()), LIMIT_S)
    options = RunOptions(tmp_path / "out" / "result.json", stream=io.StringIO(), launcher=launcher)
    started = time.monotonic()
    paired = run_against(load_config_file(repo / "compilegate.yml"), "HEAD~1", options)
    took = time.monotonic() - started
    # A cold Inductor compile alone takes longer than the limit; the child compiling when
    # it runs out is cut (not left to its own 600 s), and the run stops soon after.
    assert took < LIMIT_S + 5, took
    steps = [step for doc in (paired.base, paired.head) for step in doc["steps"]]
    errors = [said_error(s) or "" for s in steps]  # an eager child cut: the step's
    errors += [said_error(v) or "" for step in steps for v in step.get("variants") or []]
    assert any(f"timed out: --timeout-s {LIMIT_S:g} s ran out" in e for e in errors), errors
    assert (tmp_path / "out" / "result.json").is_file()
    assert (tmp_path / "out" / "result.base.json").is_file()
    worktrees = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert len(worktrees.splitlines()) == 1
