"""A step that imports more than torch runs in the container: its requirements file is
installed into the image at build time (with the network), the measured run has none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker
import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker

PROBE = {"entrypoint": ["python", "-c", "import six"], "network_mode": "none"}


def test_requirements_are_installed_at_build_time_and_the_run_stays_offline(
    docker_client: Any, local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    # The same torch's image without the requirements has no `six`: probed before the run,
    # whose image budget may evict that image's tag on an engine holding others.
    with pytest.raises(docker.errors.ContainerError):
        docker_client.containers.run(local_torch_image.tag, remove=True, **PROBE)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("six\n")
    config = write_tiny_config(
        tmp_path / "cfg",
        name="needs_six",
        entry="examples/test_steps/needs_a_dependency.py:make_step",
        variants="[{backend: eager}]",  # the build-time install is the point, not the compile
    )
    out_dir = tmp_path / "results"
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH, "--config", str(config),
        "--repo", str(REPO_ROOT), "--out-dir", str(out_dir), "--requirements", str(requirements),
        "--timeout-s", "900",
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, env=dict(os.environ), check=False, timeout=2400,
        cwd=tmp_path,
    )  # fmt: skip
    sys.stderr.write(done.stdout[-1500:] + done.stderr[-1500:])
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    document = json.loads((out_dir / f"torch-{LOCAL_TORCH}" / "result.json").read_text())
    step = document["steps"][0]
    assert step["status"] == "ok", step["error"]
    # The image with the requirements has `six` (and the torch image has not: probed above),
    # so the step's import proves the build-time install. pip's own "Successfully installed"
    # line is no proof either way: Docker reuses that layer once it was built.
    tag = re.search(r"(?:building|reusing) image (\S+)", done.stderr)
    assert tag is not None and tag.group(1) != local_torch_image.tag, done.stderr[-2000:]
    docker_client.containers.run(tag.group(1), remove=True, **PROBE)
