"""Unit tests start no process: each fork, spawn or exec here fails the test that made it.

A test that needs a real process (git, the CLI, a child, a linter) belongs in
tests/integration, out of `make test-fast`; a unit test drives the code through its seams
(an injected launcher, runner or session) instead. This keeps the fast loop fast.
"""

from __future__ import annotations

import multiprocessing.util
import os
import subprocess

import pytest

WHERE = "a unit test starts no process: move it to tests/integration (tests/unit/conftest.py)"


def _refused(*args: object, **kwargs: object) -> None:
    raise AssertionError(WHERE)


@pytest.fixture(autouse=True)
def no_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _refused)
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", _refused)
    for name in ("fork", "forkpty", "system", "posix_spawn", "posix_spawnp", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refused)
