"""The host launcher's budget on real processes (run/launcher.py, run/child_budget.py): a
child burning CPU past `timeout_s` CPU seconds is killed, with its group, and the error says
so; a child that waits is not killed by the CPU budget, however long past `timeout_s` it
runs, and is killed only at the wall cap. CPU seconds of a child's descendants count, those
that exited orphaned too (issue 51, finding 8)."""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from pathlib import Path

from cli_helpers import QUICK_STEP_SETTINGS, run_cli, write_config

from compilegate.cleanup import remove_tree
from compilegate.report.child_failure_words import cause_text, said_error
from compilegate.run.child_budget import ChildBudget
from compilegate.run.child_failure import TimedOut, WallCapPassed
from compilegate.run.descendant_cpu import COUNTED_WITH_SUBREAPER
from compilegate.run.launcher import ChildLauncher
from repo_helpers import REPO_ROOT

BURN = "while True: pass"
# The work in a grandchild, as a compile worker's g++ is: the parent only waits.
BURN_IN_GRANDCHILD = (
    "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])"
)


# A worker that double-forks 0.3 CPU-s burners, the middle process exiting first.
DOUBLE_FORKS = REPO_ROOT / "examples/test_steps/double_forks_workers.py"


def spawn(
    code: str, timeout_s: float, argv: list[str] | None = None, budget: ChildBudget | None = None
):
    launcher = ChildLauncher(stream=io.StringIO(), ahead=False)
    child = launcher._prepare((), None)
    try:
        argv = argv or [sys.executable, "-c", code]
        launcher._launch_argv(child, argv, os.getcwd())
        return launcher._wait(child, budget or ChildBudget.of(timeout_s))
    finally:
        child.close()
        remove_tree(child.workdir)


def test_a_child_burning_cpu_is_stopped_by_its_cpu_seconds() -> None:
    outcome = spawn(BURN, timeout_s=1)
    assert isinstance(outcome.cause, TimedOut), outcome.cause
    assert outcome.cause.passed.limit == "cpu" and outcome.cause.passed.budget.cpu_s == 1


def test_cpu_seconds_of_the_child_s_descendants_count() -> None:
    outcome = spawn(BURN_IN_GRANDCHILD, timeout_s=1)
    assert isinstance(outcome.cause, TimedOut) and outcome.cause.passed.limit == "cpu"


def test_a_child_that_waits_past_timeout_s_is_not_killed_by_the_cpu_budget() -> None:
    outcome = spawn("import time; time.sleep(1.5)", timeout_s=1)  # wall cap: 4 s
    assert outcome.cause is None


def test_a_child_that_only_waits_is_killed_at_the_wall_cap() -> None:
    outcome = spawn("import time; time.sleep(60)", timeout_s=0.5)
    assert isinstance(outcome.cause, WallCapPassed), outcome.cause
    said = "timed out: wall cap 2 s passed (4 × timeout_s 0.5; 0 CPU-s used)"
    assert cause_text(outcome.cause) == said


def used_cpu_s(error: str | None) -> float:
    match = re.search(r"timed out: used (\d+) CPU-s", error or "")
    assert match, error
    return float(match[1])


def burned_s(ledger: Path) -> float:
    """CPU seconds the burners used, as they wrote them down."""
    return sum(float(line) for line in ledger.read_text().split())


def test_orphaned_burners_of_a_double_forking_worker_count(tmp_path: Path) -> None:
    """Issue 51, finding 8: burners whose middle process exits first were re-parented to init
    and reaped there, their seconds never counted: the child met the wall cap, not its 2
    CPU-s. (A wall cap of 40 s: a loaded machine's slow CPU seconds still come first.)"""
    ledger = tmp_path / "burned.log"
    argv = [sys.executable, str(DOUBLE_FORKS), str(ledger)]
    outcome = spawn("", 2, argv, ChildBudget(cpu_s=2, wall_s=40))
    assert isinstance(outcome.cause, TimedOut), outcome.cause
    assert outcome.cause.counted == COUNTED_WITH_SUBREAPER
    assert outcome.cause.passed.cpu_used_s is not None
    assert 2 <= outcome.cause.passed.cpu_used_s < 4.5
    assert burned_s(ledger) <= 4  # what the burners took, by their own count


def test_a_step_whose_workers_double_fork_is_stopped_near_its_cpu_budget(tmp_path: Path) -> None:
    """The same through `compilegate run`, a step with timeout_s 5 (eager, quick): stopped by
    its CPU seconds in a few seconds, not at the 20 s wall cap with ~8 CPU-s burned."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(DOUBLE_FORKS, repo / "double_forks_workers.py")
    config = write_config(
        repo / "compilegate.yml",
        "  - name: forks\n    entry: double_forks_workers.py:make_step\n    device: cpu\n"
        "    threads: 1\n    timeout_s: 5\n" + QUICK_STEP_SETTINGS,
    )
    out = tmp_path / "result.json"
    done = run_cli(
        "run", "--config", str(config), "--repo", str(repo), "--out", str(out), timeout=300
    )
    assert done.result is not None, done.stdout + done.stderr
    error = said_error(done.result["steps"][0]) or ""
    assert error.startswith("eager: timed out: used "), error
    assert "child subreaper" in error and "wall cap" not in error
    assert 5 <= used_cpu_s(error) <= 7, error
    assert burned_s(repo / "burned.log") <= 6
