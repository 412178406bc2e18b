"""The container's output folder is hostile: the escape of issue 13, on the real engine.

The step (examples/test_steps/escape_out.py) deletes result.json in /out, plants links to
host files (`error.txt → victim.txt`, `result.json`/`leak.json → credentials`, `host → the
folder`) and kills its compilegate. Before the fix the host wrote error.txt through the link
(it replaced a file of the host's choosing) and the results folder, uploaded by
upload-artifact (which follows links), carried the credentials off the machine.
"""

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

SECRET = "token=ghs_never_leaves_the_host"


def test_links_planted_in_out_are_never_followed_and_nothing_leaks(
    local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "victim.txt").write_text("untouched\n")
    (host / "credentials").write_text(SECRET + "\n")
    config = write_tiny_config(
        tmp_path / "cfg",
        name="escape",
        entry="examples/test_steps/escape_out.py:make_step",
        extra="    env: [ESCAPE_TARGETS_DIR]\n",
    )
    out_dir = tmp_path / "results"
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH, "--config", str(config),
        "--repo", str(REPO_ROOT), "--out-dir", str(out_dir), "--timeout-s", "600",
    ]  # fmt: skip
    env = {**os.environ, "ESCAPE_TARGETS_DIR": str(host)}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, check=False, timeout=1200,
        cwd=tmp_path,
    )  # fmt: skip
    sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
    assert done.returncode == 3, done.stdout + done.stderr[-3000:]
    # the host wrote nothing through a planted link
    assert (host / "victim.txt").read_text() == "untouched\n"
    assert sorted(p.name for p in host.iterdir()) == ["credentials", "victim.txt"]
    # what would be uploaded: regular files compilegate wrote, no link, no host file's bytes
    uploaded = sorted(out_dir.rglob("*"))
    assert not [p for p in uploaded if p.is_symlink()], uploaded
    files = {p.relative_to(out_dir).as_posix() for p in uploaded if p.is_file()}
    assert files == {"report.md", f"torch-{LOCAL_TORCH}/error.txt"}, files
    for path in uploaded:
        if path.is_file():
            assert "ghs_never_leaves_the_host" not in path.read_text(errors="replace"), path
    error = (out_dir / f"torch-{LOCAL_TORCH}" / "error.txt").read_text()
    assert "result.json refused: not a regular file" in error, error
    # the staging folder the container wrote into is gone
    assert "compilegate-out-" not in " ".join(os.listdir(tmp_path))
