"""`matrix --against REF` on the real engine: the base commit and the pull request's commit
alternating, each child in its own container of the version's image. The head's step is
hostile: it writes markers wherever it can (its Inductor cache, HOME, /tmp) and tries the
read-only tree and the network; the base's step, which runs after it in every other slot,
fails if it ever sees one of them. Nothing the head writes may change how the base is
measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH

from repo_helpers import REPO_ROOT, git

pytestmark = pytest.mark.docker

STEP = """
import os
import socket
from pathlib import Path

import torch
from torch import nn

ROLE = "{role}"
MARKER = "planted-by-the-head"
PLACES = [os.environ["TORCHINDUCTOR_CACHE_DIR"], os.environ["HOME"], "/tmp"]


def make_step(device="cpu"):
    if ROLE == "head":
        for place in PLACES:
            Path(place).mkdir(parents=True, exist_ok=True)
            Path(place, MARKER).write_text("x")
        try:
            Path("/workspace/step.py").write_text("# rewritten by the head")
        except OSError:
            pass
        else:
            raise RuntimeError("the tree was writable")
        try:
            socket.create_connection(("10.0.0.1", 53), timeout=2)
        except OSError:
            pass
        else:
            raise RuntimeError("the network was reachable")
    else:
        seen = [place for place in PLACES if Path(place, MARKER).exists()]
        if seen:
            raise RuntimeError(f"the base saw the head's writes in {{seen}}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys = torch.randn(4, 8, 8), torch.randint(0, 2, (4, 8))

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {{"model": model, "optimizer": optimizer, "batch": lambda i: (xs[i % 4], ys[i % 4]),
            "loss": loss}}
"""
CONFIG = """\
version: 1
steps:
  - name: sides
    entry: step.py:make_step
    device: cpu
    variants: [{backend: eager}]
    warmup: 2
    iterations: 6
    rounds: 2
    threads: 1
    eager_processes: 2
    variant_processes: 2
    timeout_s: 300
    numerics: {enabled: false}
"""


def test_the_hostile_head_cannot_touch_the_base(
    local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "compilegate.yml").write_text(CONFIG)
    (repo / "step.py").write_text(STEP.format(role="base"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "step.py").write_text(STEP.format(role="head"))
    git(repo, "commit", "-qam", "head")
    out_dir = tmp_path / "results"
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH, "--against", "HEAD~1",
        "--config", str(repo / "compilegate.yml"), "--out-dir", str(out_dir),
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=1200, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    output = done.stdout[-4000:] + done.stderr[-4000:]
    head = json.loads((out_dir / f"torch-{LOCAL_TORCH}" / "result.json").read_text())
    base = json.loads((out_dir / f"torch-{LOCAL_TORCH}" / "result.base.json").read_text())
    for side in (base, head):
        step = side["steps"][0]
        assert step["status"] == "ok", (step.get("error"), output)
        assert all(v["status"] == "ok" for v in step["variants"]), (step["variants"], output)
        assert len(step["variants"][0]["processes"]) == 2
    assert base["pairing"]["id"] == head["pairing"]["id"]
    assert done.returncode in (0, 1), output  # judged; a speed verdict either way
    assert "paired, 2 pairs, same machine" in " ".join(done.stdout.split()), output
    assert (repo / "step.py").read_text() == STEP.format(role="head"), "the tree is untouched"
    labels = [line.split()[0] for line in done.stderr.splitlines() if line.startswith("[sides")]
    assert labels[:4] == ["[sides", "[sides", "[sides", "[sides"]
    order = [line for line in done.stderr.splitlines() if "eager reference" in line]
    assert [line.split("·")[1].split("]")[0].strip() for line in order] == [
        "base", "head", "head", "base",
    ]  # fmt: skip


def test_two_versions_alternate_each_child_in_its_versions_image(
    local_torch_image: Any, base_image: str, tmp_path: Path, room_for_second_torch: None
) -> None:
    """`matrix --paired`: the upgrade question on one machine. With one real version (no
    COMPILEGATE_DOCKER_SECOND_TORCH) it must refuse: a paired run needs two."""
    second = os.environ.get("COMPILEGATE_DOCKER_SECOND_TORCH")
    config = tmp_path / "compilegate.yml"
    config.write_text(
        CONFIG.replace("step.py:make_step", "examples/test_steps/tiny_mlp.py:make_step")
    )
    out_dir = tmp_path / "results"
    versions = [LOCAL_TORCH, *([second] if second else [])]
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker", "--paired",
        "--base-image", base_image, "--config", str(config), "--repo", str(REPO_ROOT),
        "--out-dir", str(out_dir),
    ]  # fmt: skip
    for version in versions:
        command += ["--torch", version]
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=3000, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    output = done.stdout[-4000:] + done.stderr[-4000:]
    if not second:
        assert done.returncode == 2 and "at least two --torch versions" in done.stderr, output
        pytest.skip("SECOND TORCH NOT TESTED: set COMPILEGATE_DOCKER_SECOND_TORCH (CI does)")
    base = json.loads((out_dir / f"torch-{LOCAL_TORCH}" / "result.json").read_text())
    head = json.loads((out_dir / f"torch-{second}" / "result.json").read_text())
    assert head["environment"]["torch"].split("+")[0] == second, output
    for side in (base, head):
        assert side["steps"][0]["status"] == "ok", (side["steps"][0].get("error"), output)
    assert (base["pairing"]["role"], head["pairing"]["role"]) == ("base", "head")
    assert done.returncode in (0, 1), output
    assert "paired, 2 pairs, same machine" in " ".join(done.stdout.split()), output
