"""Fixtures for the GitHub integration tests: a local fake GitHub, checked against the contract."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_github import READ_ONLY_TOKEN, REPO, TOKEN, FakeGitHub


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    """A fake GitHub on 127.0.0.1; the test fails if any exchange broke the contract."""
    fake = FakeGitHub(REPO, token=TOKEN, read_only_tokens=frozenset({READ_ONLY_TOKEN}))
    try:
        yield fake
    finally:
        fake.close()
    assert fake.violations == []
