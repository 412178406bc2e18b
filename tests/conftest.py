"""Shared fixtures and markers. Integration tests need torch; unit tests must not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT
