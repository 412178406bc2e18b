"""`compilegate matrix` through the real CLI and the real Docker engine: one image per torch
version, a hostile step that looks for the runner's secrets inside the container, a version
that cannot be installed, and the merged report.

Set COMPILEGATE_DOCKER_SECOND_TORCH=2.14.1 for a second real version (a 6 GB CUDA image;
.ci/run does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from compilegate.schemas import validation_errors
from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker

SECRETS = {
    "GITHUB_TOKEN": "ghs_must_not_leak",
    "AWS_SECRET_ACCESS_KEY": "aws_must_not_leak",
    "HF_TOKEN": "hf_must_not_leak",
    "MY_API_TOKEN": "api_must_not_leak",
}


def hostile_config(folder: Path) -> Path:
    """The hostile step, allowed to see only where to write what it saw."""
    return write_tiny_config(
        folder,
        name="hostile",
        entry="examples/test_steps/hostile_env.py:make_step",
        extra="    env: [COMPILEGATE_TEST_ENV_REPORT]\n",
    )


def test_matrix_measures_each_version_in_its_image_and_reports_them_together(
    local_torch_image: Any, base_image: str, tmp_path: Path, room_for_second_torch: None
) -> None:
    second = os.environ.get("COMPILEGATE_DOCKER_SECOND_TORCH")
    versions = [LOCAL_TORCH, *([second] if second else []), "0.0.0"]
    out_dir = tmp_path / "results"
    command = [
        sys.executable,
        "-P",
        "-m",
        "compilegate",
        "matrix",
        "--backend",
        "docker",
        "--base-image",
        base_image,
        "--config",
        str(hostile_config(tmp_path / "cfg")),
        "--repo",
        str(REPO_ROOT),
        "--out-dir",
        str(out_dir),
        "--timeout-s",
        "1500",
    ]
    for version in versions:
        command += ["--torch", version]
    env = {
        **os.environ,
        **SECRETS,
        "PYTHONPATH": str(REPO_ROOT / "runner"),
        "COMPILEGATE_TEST_ENV_REPORT": "/out/env.json",
    }
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, check=False, timeout=3600
    )
    wall_s = time.perf_counter() - started
    sys.stderr.write(f"\n[matrix over {versions}: {wall_s:.0f} s]\n{done.stdout}\n")

    assert done.returncode == 3, done.stdout + done.stderr[-3000:]  # the uninstallable version
    for version in versions[:-1]:
        folder = out_dir / f"torch-{version}"
        result = json.loads((folder / "result.json").read_text())
        assert validation_errors(result, "result") == []
        assert result["environment"]["torch"].split("+")[0] == version
        step = result["steps"][0]
        assert step["status"] == "ok", step["error"]  # the hostile step found no secret
        # What the step wrote beside its result (/out/env.json) stays in the container's
        # staging folder: only compilegate's clean copy of result.json reaches the results.
        assert sorted(p.name for p in folder.iterdir()) == ["result.json"]
    assert (out_dir / "torch-0.0.0" / "error.txt").is_file()
    report = (out_dir / "report.md").read_text()
    for version in versions[:-1]:
        assert f"| {version} |" in report  # one row per version (2.13.0+cpu: without +cpu)
    assert "| 0.0.0 | - | ❌\u00a0error | torch 0.0.0: ERROR: " in report, report
