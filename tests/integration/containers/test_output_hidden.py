"""Output hidden behind mode 000 on a non-root runner, on the real engine (issue 29, finding 5).

The step (examples/test_steps/hides_output.py) writes 20 MiB in /out/hidden and makes the
folder mode 000, under a 1 MiB `limits.output_mib`. `compilegate matrix` runs as a non-root
user (the runner's usual case; root reads through any mode), so the container runs as that
user's uid and the staging folder is that user's. Before the fix the size check skipped the
folder it could not list (exit 0, the limit silent) and the cleanup, ignoring errors, left
the 20 MiB in the temp folder. Now the run is an error naming the limit (exit 3) and the
temp folder is empty.

As root, the command runs as uid 65534 with the docker socket's group; its Python must be
one that uid can run with compilegate's dependencies: $COMPILEGATE_NONROOT_PYTHON, else this
interpreter (skipped loudly when that uid cannot import them).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from repo_helpers import REPO_ROOT
from unprivileged import (
    UNPRIVILEGED_UID,
    as_unprivileged,
    nonroot_python,
    runs_as_root,
    unprivileged_folder,
)

pytestmark = pytest.mark.docker

SOCKET = Path("/var/run/docker.sock")
STEPS = REPO_ROOT / "examples" / "test_steps"


def test_output_hidden_behind_mode_000_is_over_the_limit_and_nothing_is_left(
    local_torch_image: Any, base_image: str
) -> None:
    with unprivileged_folder() as work:
        tmp, home, results = work / "tmp", work / "home", work / "results"
        # The step in a repository of its own (no .git: a linked worktree's .git file names
        # a folder the container cannot see).
        repo = work / "repo"
        repo.mkdir()
        for name in ("hides_output.py", "tiny_mlp.py", "classification.py"):
            shutil.copy(STEPS / name, repo / name)
        config = write_tiny_config(
            work / "cfg", name="hides", entry="hides_output.py:make_step",
            extra="    limits: {output_mib: 1}\n",
        )  # fmt: skip
        tmp.mkdir()
        home.mkdir()
        if runs_as_root():
            for path in (tmp, home, config.parent, config, repo, *repo.iterdir()):
                os.chown(path, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        env = {
            key: value
            for key, value in os.environ.items()
            if key.startswith(("PIP_", "DOCKER_", "COMPILEGATE_BUILD_NETWORK"))
        }
        env.update(
            PATH=os.environ.get("PATH", "/usr/bin:/bin"), HOME=str(home), TMPDIR=str(tmp),
            PYTHONPATH=str(REPO_ROOT / "runner"),
        )  # fmt: skip
        groups = [SOCKET.stat().st_gid] if SOCKET.exists() else []
        python = nonroot_python(env, groups=groups, cwd=work)
        command = [
            python, "-m", "compilegate", "matrix", "--backend", "docker",
            "--base-image", base_image, "--torch", LOCAL_TORCH, "--config", str(config),
            "--repo", str(repo), "--out-dir", str(results), "--timeout-s", "600",
        ]  # fmt: skip
        done = as_unprivileged(command, env=env, groups=groups, cwd=work, timeout_s=1200)
        output = done.stdout + done.stderr
        sys.stderr.write(output[-3000:])
        left = sorted(os.listdir(tmp))
        modes = {name: stat.filemode(os.lstat(tmp / name).st_mode) for name in left}
        # exit 3, and the staging folder and its 20 MiB are gone
        assert (done.returncode, left) == (3, []), (modes, output[-3000:])
        assert "output folder over its limit of 1 MiB (limits.output_mib)" in output
        assert "hidden unreadable (Permission denied)" in output
        assert "could not remove" not in output
