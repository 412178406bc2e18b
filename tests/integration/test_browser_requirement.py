"""Without Chromium the browser test of the PR comment skips, loudly; with REQUIRE_BROWSER=1
(what CI sets) it fails instead, so CI cannot go green without having looked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_helpers import REPO_ROOT


def run_browser_tests(tmp_path: Path, require: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": str(tmp_path), "REQUIRE_BROWSER": require}  # no Chromium
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
            "-k",
            "stylesheet",
            str(REPO_ROOT / "tests" / "browser"),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("require", "code", "says"),
    [("0", 0, "SKIPPED LOUDLY: no Chromium"), ("1", 1, "REQUIRE_BROWSER=1")],
)
def test_no_chromium_skips_loudly_or_fails_when_required(tmp_path: Path, require, code, says):
    done = run_browser_tests(tmp_path, require)
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout
