"""The venv backend for real: a cached environment per torch version, compilegate run with
`--python`. torch 0.0.0 cannot be installed and is an error outcome; the local torch's result
is kept. The first run creates ~/.cache/compilegate/venvs/torch-2.13.0 (about a minute from the
wheel on disk), later runs reuse it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from compilegate.containers.matrix import run_matrix
from compilegate.containers.venv_backend import VenvBackend
from repo_helpers import REPO_ROOT

# In CI's second lane (scripts/run-tests.sh): about a minute, most of it the venv's install.
pytestmark = [pytest.mark.compile, pytest.mark.lane_beside]


def test_venv_matrix_keeps_good_version(tmp_path: Path) -> None:
    config = write_tiny_config(tmp_path / "config")
    lines: list[str] = []
    venv_root = os.environ.get("COMPILEGATE_VENV_ROOT")
    backend = VenvBackend(venv_root=Path(venv_root) if venv_root else None, log=lines.append)
    # The run's environment: an explicit allow-list, as the CLI builds it.
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    good, bad = run_matrix(
        [LOCAL_TORCH, "0.0.0"], backend, config=config, repo=REPO_ROOT,
        out_dir=tmp_path / "out", env=env, timeout_s=600, log=lines.append,
    )  # fmt: skip
    assert good.ok, (good.error, "\n".join(good.log_tail))
    document = json.loads(good.result_path.read_text())
    assert document["steps"][0]["status"] == "ok", document["steps"][0].get("error")
    assert not bad.ok and bad.result_path is None
    assert "torch 0.0.0: virtual environment failed" in bad.error
    assert not backend.venv_dir("0.0.0").exists()
