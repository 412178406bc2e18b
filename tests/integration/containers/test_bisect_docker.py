"""`compilegate bisect --backend docker` on the real engine (issue 55): the 32-commit history
of tests/integration/test_bisect.py (an `.item()` at commit 19, a data-dependent branch at
27), each probe's counting child in a fresh container of the local torch's image, the probed
commit's worktree read-only at /workspace."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bisect_history import SUBJECTS, build_history
from docker_helpers import LOCAL_TORCH

from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker


def test_bisect_in_containers_names_both_commits(
    local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shas = build_history(repo, 32, item_at=19, branch_at=27)
    command = [
        sys.executable, "-m", "compilegate", "bisect", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH,
        "--config", str(repo / "compilegate.yml"), "--good", shas[0], "--bad", shas[-1],
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=1800, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    output = done.stdout[-4000:] + done.stderr[-4000:]
    assert done.returncode == 0, output
    lines = done.stdout.splitlines()
    item = f"first at {shas[18][:7]} {SUBJECTS['item']!r}"
    branch = f"first at {shas[26][:7]} {SUBJECTS['branch']!r}"
    assert any(line.startswith("step tiny, eager: host syncs 0 → 1") and item in line
               for line in lines), output  # fmt: skip
    assert any("graph breaks 0 → 1 (new at steps.py:14" in line and branch in line
               for line in lines), output  # fmt: skip
    tally = re.match(r"(\d+) probes of 32 commits", lines[-1])
    assert tally and int(tally.group(1)) <= (math.ceil(math.log2(32)) + 2) * 2, output
    assert not subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True,
                               text=True, check=True).stdout  # fmt: skip
    assert worktrees.count("\n") == 1, worktrees  # every probe's worktree removed
