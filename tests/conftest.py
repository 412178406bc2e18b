"""Shared fixtures and the one place the test tree is put on sys.path.

Markers are declared in pyproject.toml ([tool.pytest.ini_options]) and nowhere else. Helper
modules (no `test_` prefix) are imported by name from any folder: the package under test from
runner/, then the folders below that hold helpers several test folders share.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
HELPER_FOLDERS = (
    TESTS,  # repo_helpers (REPO_ROOT, git), unprivileged
    TESTS / "unit",  # gate_docs, report_runs, golden_verdicts, decision_docs
    TESTS / "unit" / "github",  # github_fakes
    TESTS / "integration",  # cli_helpers, actions_runner
    TESTS / "integration" / "github",  # fake_github
    TESTS / "integration" / "containers",  # docker_helpers, image_prebuild
    TESTS / "contract" / "github",  # github_contract
    # tests/unit/<wing>/: a unit test borrows another's document builders by module name
    # (test_count_words from test_compile_cost_judge), across wings
    *sorted(
        folder
        for folder in (TESTS / "unit").iterdir()
        if folder.is_dir() and folder.name not in ("data", "github", "__pycache__")
    ),
)
for folder in reversed((TESTS.parent / "runner", *HELPER_FOLDERS)):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import image_prebuild  # noqa: E402

from repo_helpers import REPO_ROOT  # noqa: E402

CONTAINER_TESTS = TESTS / "integration" / "containers"
PREBUILD = image_prebuild.PREBUILD


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The container tests run last, and when other tests run before them their images are
    built meanwhile, in a process of their own (image_prebuild.py says why)."""
    containers = [item for item in items if CONTAINER_TESTS in Path(item.path).parents]
    if not containers or len(containers) == len(items):
        return
    items[:] = [item for item in items if CONTAINER_TESTS not in Path(item.path).parents]
    items.extend(containers)
    status_file = Path(tempfile.mkdtemp(prefix="compilegate-prebuild-")) / "images.jsonl"
    config.stash[PREBUILD] = (image_prebuild.start(status_file), status_file)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A run that stopped before its container tests ends the builds started for them."""
    process, _ = session.config.stash.get(PREBUILD, (None, None))
    if process is not None and process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait()
