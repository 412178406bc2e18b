"""Unit tests start no process: each fork, spawn or exec here fails the test that made it.

A test that needs a real process (git, the CLI, a child, a linter) belongs in
tests/integration, out of `make test-fast`; a unit test drives the code through its seams
(an injected launcher, runner or session) instead. This keeps the fast loop fast.
"""

from __future__ import annotations

import multiprocessing.util
import os
import subprocess
from collections.abc import Callable
from types import SimpleNamespace

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


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Callable:
    """`compilegate ARGS` as a user's shell runs it (no GitHub variables), in this process:
    its exit code and what it printed."""
    from compilegate.cli import main

    for name in list(os.environ):
        if name != "PATH":
            monkeypatch.delenv(name)

    def run(*args: str) -> SimpleNamespace:
        capsys.readouterr()
        code = main(list(args))
        printed = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=printed.out, stderr=printed.err)

    return run
