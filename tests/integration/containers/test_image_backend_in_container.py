"""The image as a job container (issue 52, item 1), in the real image: the job container runs
as root (as GitHub's container jobs with `options: --user 0` and many pods do), the parent
compilegate holds a token in its environment, and `compilegate run --backend image`
measures with the image's own torch. Its children run as the image's user (uid 1000): a step
that searches its environment and every /proc/PID/environ for the token finds none. The
control, `--backend host` in the same container, runs the child as root, and the same search
finds the token in the parent's process environment: the search can fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import QUICK_STEP_SETTINGS

pytestmark = pytest.mark.docker

PLANTED = "ghs_plantedJobContainerToken0123456789"
# A step whose factory reports who it runs as and where it found the token, then stops.
PROBE_STEP = f"""\
import glob
import os

PLANTED = {PLANTED!r}


def make_step(device="cpu"):
    found = [name for name, value in os.environ.items() if PLANTED in value]
    for path in sorted(glob.glob("/proc/[0-9]*/environ")):
        try:
            with open(path, "rb") as handle:
                if PLANTED.encode() in handle.read():
                    found.append(path)
        except OSError:
            pass
    raise RuntimeError(f"probe: euid={{os.geteuid()}} found={{','.join(found) or 'none'}}")
"""


def probe_in_container(client: Any, image: str, tmp_path: Path, backend: str) -> tuple[str, str]:
    """The probe's error as the result records it, and the container's output."""
    repo, out = tmp_path / f"repo-{backend}", tmp_path / f"out-{backend}"
    repo.mkdir()
    out.mkdir()
    (repo / "steps.py").write_text(PROBE_STEP)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: probe\n    entry: steps.py:make_step\n    threads: 1\n"
        + QUICK_STEP_SETTINGS
    )
    container = client.containers.run(
        image,
        ["run", "--backend", backend, "--config", "/workspace/compilegate.yml",
         "--out", "/out/result.json", "--one-at-a-time"],
        user="0:0", environment={"GITHUB_TOKEN": PLANTED}, network_mode="none",
        volumes={str(repo): {"bind": "/workspace", "mode": "ro"},
                 str(out): {"bind": "/out", "mode": "rw"}},
        detach=True,
    )  # fmt: skip
    try:
        status = container.wait(timeout=600)
        logs = container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)
    assert status["StatusCode"] == 3, logs[-3000:]  # the probe step failed, as it must
    document = json.loads((out / "result.json").read_text())
    return document["steps"][0]["error"], logs


def test_the_children_run_as_the_images_user_and_find_no_token(
    docker_client: Any, local_torch_image: Any, tmp_path: Path
) -> None:
    error, logs = probe_in_container(docker_client, local_torch_image.tag, tmp_path, "image")
    assert "probe: euid=1000 found=none" in error, error
    assert "the measuring children run as compilegate (uid 1000)" in logs, logs[-3000:]


def test_the_control_as_root_finds_the_token_in_its_parents_environment(
    docker_client: Any, local_torch_image: Any, tmp_path: Path
) -> None:
    error, _ = probe_in_container(docker_client, local_torch_image.tag, tmp_path, "host")
    assert "probe: euid=0 found=/proc/" in error, error
