"""The requirements file on the real Docker engine: a link out of the repository is refused
before any build (it used to copy the link's target, a runner's secret, into the build, where
pip printed it into the log, error.txt and the comment), and only wheels are installed unless
the opt-out says source builds may run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker

SECRET = "runner-credential-must-not-leak-7f3a"


def matrix(tmp_path: Path, repo: Path, base_image: str, *extra: str) -> subprocess.CompletedProcess:
    # The install is the point, not the compile: Dynamo alone.
    config = write_tiny_config(
        tmp_path / "cfg", entry="tiny_mlp.py:make_step", variants="[{backend: eager}]"
    )
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH, "--config", str(config),
        "--repo", str(repo), "--out-dir", str(tmp_path / "results"), "--timeout-s", "900",
        *extra,
    ]  # fmt: skip
    return subprocess.run(
        command, capture_output=True, text=True, env=dict(os.environ), check=False, timeout=2400,
        cwd=tmp_path,
    )  # fmt: skip


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in ("tiny_mlp.py", "classification.py"):
        (repo / name).write_text((REPO_ROOT / "examples/test_steps" / name).read_text())
    return repo


def everything_written(tmp_path: Path) -> str:
    texts = []
    for path in tmp_path.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.name != "secret.txt":
            texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


def test_a_requirements_link_to_a_secret_is_refused_before_the_build(
    local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    repo = make_repo(tmp_path)
    (repo / "requirements.txt").symlink_to(os.path.relpath(secret, repo))
    done = matrix(tmp_path, repo, base_image, "--requirements", str(repo / "requirements.txt"))
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "requirements.txt" in lines[0] and "symbolic link" in lines[0]
    assert "building image" not in output and "Traceback" not in output
    assert SECRET not in output and SECRET not in everything_written(tmp_path)


def test_only_wheels_are_installed_from_requirements_unless_source_builds_are_allowed(
    local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    requirements = repo / "requirements.txt"
    # On the index as an sdist only: installing it runs its build code (setup.py).
    requirements.write_text("pyperclip==1.8.2\n")
    done = matrix(tmp_path, repo, base_image, "--requirements", str(requirements))
    output = done.stdout + done.stderr
    error = (tmp_path / "results" / f"torch-{LOCAL_TORCH}" / "error.txt").read_text()
    assert done.returncode != 0, output[-3000:]
    assert "--requirements-allow-source-builds" in error.strip().splitlines()[-1], error
    # A pip option in the file cannot turn source builds back on.
    requirements.write_text("--no-binary :all:\npyperclip==1.8.2\n")
    done = matrix(tmp_path, repo, base_image, "--requirements", str(requirements))
    assert done.returncode == 2 and "requirements.txt:1" in done.stderr, done.stderr[-2000:]
    requirements.write_text("pyperclip==1.8.2\n")
    done = matrix(
        tmp_path, repo, base_image, "--requirements", str(requirements),
        "--requirements-allow-source-builds",
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
