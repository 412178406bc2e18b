"""The fast loop's promise (tests/unit/conftest.py): a unit test that starts a process fails,
naming where the test belongs, whichever way it starts one."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "start",
    [
        lambda: subprocess.run(["true"], check=False),
        lambda: subprocess.Popen([sys.executable, "-c", "pass"]),
        lambda: os.system("true"),
        lambda: multiprocessing.get_context("spawn").Process(target=print).start(),
    ],
    ids=["subprocess.run", "Popen", "os.system", "multiprocessing-spawn"],
)
def test_starting_a_process_fails_and_names_tests_integration(start) -> None:
    with pytest.raises(AssertionError, match="move it to tests/integration"):
        start()
