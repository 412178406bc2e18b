"""The host launcher's budget on real processes (run/launcher.py, run/child_budget.py): a
child burning CPU past `timeout_s` CPU seconds is killed, with its group, and the error says
so; a child that waits is not killed by the CPU budget, however long past `timeout_s` it
runs, and is killed only at the wall cap. CPU seconds of a child's descendants count."""

from __future__ import annotations

import io
import os
import sys

from compilegate.cleanup import remove_tree
from compilegate.run.child_budget import ChildBudget
from compilegate.run.launcher import ChildLauncher

BURN = "while True: pass"
# The work in a grandchild, as a compile worker's g++ is: the parent only waits.
BURN_IN_GRANDCHILD = (
    "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])"
)


def spawn(code: str, timeout_s: float):
    launcher = ChildLauncher(stream=io.StringIO(), ahead=False)
    child = launcher._prepare((), None)
    try:
        launcher._launch_argv(child, [sys.executable, "-c", code], os.getcwd())
        return launcher._wait(child, ChildBudget.of(timeout_s))
    finally:
        child.close()
        remove_tree(child.workdir)


def test_a_child_burning_cpu_is_stopped_by_its_cpu_seconds() -> None:
    outcome = spawn(BURN, timeout_s=1)
    assert (outcome.error or "").startswith("timed out: used "), outcome.error
    assert "CPU-s (timeout_s 1) in " in (outcome.error or "")


def test_cpu_seconds_of_the_child_s_descendants_count() -> None:
    outcome = spawn(BURN_IN_GRANDCHILD, timeout_s=1)
    assert (outcome.error or "").startswith("timed out: used "), outcome.error


def test_a_child_that_waits_past_timeout_s_is_not_killed_by_the_cpu_budget() -> None:
    outcome = spawn("import time; time.sleep(1.5)", timeout_s=1)  # wall cap: 4 s
    assert outcome.error is None


def test_a_child_that_only_waits_is_killed_at_the_wall_cap() -> None:
    outcome = spawn("import time; time.sleep(60)", timeout_s=0.5)
    assert outcome.error == "timed out: wall cap 2 s passed (4 × timeout_s 0.5; 0 CPU-s used)"
