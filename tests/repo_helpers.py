"""What many test modules share: where the repository and its folders are, and git run in a
scratch repository. tests/ is on sys.path (tests/conftest.py), so any test imports these."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = REPO_ROOT / "tests"
RUNNER = REPO_ROOT / "runner"


def git(repo: Path, *args: str) -> str:
    """`git -C repo ARGS` as a throwaway identity; its stdout, stripped. Raises on failure."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()
