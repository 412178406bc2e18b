"""Shared fixtures and the one place the test tree is put on sys.path.

Markers are declared in pyproject.toml ([tool.pytest.ini_options]) and nowhere else. Helper
modules (no `test_` prefix) are imported by name from any folder: the package under test from
runner/, then the folders below that hold helpers several test folders share.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
HELPER_FOLDERS = (
    TESTS,  # repo_helpers (REPO_ROOT, git), unprivileged
    TESTS / "unit",  # gate_docs, report_runs, golden_verdicts, decision_docs
    TESTS / "unit" / "github",  # github_fakes
    TESTS / "integration",  # cli_helpers, actions_runner
    TESTS / "integration" / "github",  # fake_github
    TESTS / "integration" / "containers",  # docker_helpers
    TESTS / "contract" / "github",  # github_contract
)
for folder in reversed((TESTS.parent / "runner", *HELPER_FOLDERS)):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from repo_helpers import REPO_ROOT  # noqa: E402


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT
