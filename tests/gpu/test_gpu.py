"""GPU-only checks: CUDA-event timing, peak memory, reduce-overhead. Skipped loudly without CUDA."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli, write_config

from repo_helpers import REPO_ROOT


def _has_cuda() -> bool:
    probe = [
        sys.executable,
        "-c",
        "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)",
    ]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not _has_cuda(), reason="NO CUDA DEVICE: GPU tests skipped (run on a GPU host)"
    ),
]


def test_cuda_step_reports_memory_and_reduce_overhead(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "c.yml",
        "  - name: mlp\n    entry: examples/test_steps/tiny_mlp.py:make_step\n    device: cuda\n"
        "    variants: [{mode: default}, {mode: reduce-overhead}]\n"
        "    warmup: 5\n    iterations: 20\n    rounds: 4\n",
    )
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json")
    )
    assert run.returncode == 0, run.stderr[-2000:]
    step = run.result["steps"][0]
    assert step["device"] == "cuda" and run.result["environment"]["gpu_name"]
    for variant in step["variants"]:
        assert variant["status"] == "ok", variant["error"]
        assert variant["peak_bytes"] > 0 and variant["eager_peak_bytes"] > 0
