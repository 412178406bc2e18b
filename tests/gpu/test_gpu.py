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


def test_an_in_place_update_of_an_input_loses_the_cuda_graphs_and_fails_the_gate(
    tmp_path: Path,
) -> None:
    """Issue 55: reduce-overhead with a planted `x.mul_(1.0)` on the forward's input. Inductor
    skips the CUDA graph (torch's reason, "mutated inputs", at the planted line); against a
    baseline that used its graphs the row fails, apart from the graph-break rows."""
    import copy
    import json

    step_file = "examples/test_steps/mutates_input.py"
    line = next(
        number
        for number, text in enumerate((REPO_ROOT / step_file).read_text().splitlines(), 1)
        if "# CUDA GRAPHS SKIPPED" in text
    )
    config = write_config(
        tmp_path / "c.yml",
        f"  - name: mlp\n    entry: {step_file}:make_step\n    device: cuda\n"
        "    variants: [{mode: reduce-overhead}]\n"
        "    warmup: 5\n    iterations: 20\n    rounds: 4\n    numerics: {enabled: false}\n",
    )
    result = tmp_path / "r.json"
    run = run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(result))
    assert run.returncode == 0, run.stderr[-2000:]
    graphs = run.result["steps"][0]["variants"][0]["cuda_graphs"]
    assert graphs["skips"] >= 1
    assert graphs["reasons"][0]["reason"].startswith("mutated inputs")
    assert (graphs["reasons"][0]["file"], graphs["reasons"][0]["line"]) == (step_file, line)
    assert "reduce-overhead ran without CUDA graphs: mutated inputs" in " ".join(run.stdout.split())

    used = copy.deepcopy(run.result)
    used["steps"][0]["variants"][0]["cuda_graphs"] = {"skips": 0, "reasons": []}
    base = tmp_path / "used-its-graphs.json"
    base.write_text(json.dumps(used))
    baseline = tmp_path / "baseline.json"
    update = run_cli(
        "baseline", "update", "--result", str(base), "--baseline", str(baseline), "--force"
    )
    assert update.returncode == 0, update.stderr[-2000:]
    verdicts = tmp_path / "v.json"
    compare = run_cli(
        "compare", "--baseline", str(baseline), "--result", str(result), "--out", str(verdicts)
    )
    assert compare.returncode == 1, compare.stdout[-2000:]
    row = next(
        r for r in json.loads(verdicts.read_text())["verdicts"] if r["metric"] == "cuda_graph_skips"
    )
    assert row["verdict"] == "regression"
    assert "mutated inputs" in row["message"] and f"{step_file}:{line}" in row["message"]
