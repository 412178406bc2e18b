"""A distributed step in a container on the real engine (issue 43): the measuring child the
ContainerLauncher starts (the launcher of `matrix` and `matrix --against`) starts its two DDP
ranks inside the same container, so they have its isolation: no network interface but
loopback (gloo runs over it), not root, the repository read-only, and 1 GiB of /dev/shm
for NCCL's transport (64 MiB by default). The eager references come
back with the group's record; a rank's own view is printed by the step and read from the
child's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker

STEP = """
import json, os, socket

import torch
import torch.distributed as dist
from torch import nn


def make_step(device="cpu"):
    shm = os.statvfs("/dev/shm")
    seen = {"rank": dist.get_rank(), "world": dist.get_world_size(), "uid": os.getuid(),
            "interfaces": sorted(name for _, name in socket.if_nameindex()),
            "shm_bytes": shm.f_blocks * shm.f_frsize}
    try:
        open("written-by-a-rank.txt", "w").close()
        seen["repo_write"] = "ok"
    except OSError as exc:
        seen["repo_write"] = exc.strerror
    print("RANK " + json.dumps(seen), flush=True)
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    xs = torch.randn(4, 8)
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
            "batch": lambda i: xs, "loss": lambda m, x: m(x).square().mean()}
"""
DRIVER = """
import json, sys
from pathlib import Path
import docker
from compilegate.child.protocol import ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import failure_text
from compilegate.containers.child_launcher import ContainerLauncher
from compilegate.run.entry_check import resolve_entry

image, repo, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
step = load_config_file(repo / "compilegate.yml", repo_root=repo).steps[0]
entry = resolve_entry(step.entry, repo, "test")
spec = ChildSpec(kind="eager", repo_root=str(repo), entry=entry, step=step.name, device="cpu",
                 settings=step.measurement_settings(), limits=step.limits.to_dict())
launcher = ContainerLauncher(docker.from_env(timeout=600), image, stream=open("/dev/null", "w"),
                             show_output=True)
outcome = launcher.run(spec, label="ddp", timeout_s=300 * step.processes_per_child)
report = outcome.report.to_json() if outcome.report is not None else None
said = failure_text(outcome.failure) if outcome.failure else None
out.write_text(json.dumps({"error": said, "report": report, "tail": outcome.output_tail}))
"""


def rank_views(tail: list[str]) -> list[dict]:
    """Each rank's printed view: the ranks print at once, so two views can share a line."""
    decoder, found = json.JSONDecoder(), []
    for line in tail:
        for part in line.split("RANK ")[1:]:
            if part.startswith("{"):
                found.append(decoder.raw_decode(part)[0])
    return found


def test_the_ranks_run_inside_the_childs_container_with_its_isolation(
    local_torch_image: Any, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "step.py").write_text(STEP)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: ddp\n    entry: step.py:make_step\n    device: cpu\n"
        "    variants: [{mode: default}]\n    warmup: 1\n    iterations: 4\n    rounds: 2\n"
        "    threads: 1\n    distributed: {wrapper: ddp, world_size: 2}\n"
    )
    out = tmp_path / "outcome.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, local_torch_image.tag, str(repo), str(out)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["error"] is None, result["tail"][-20:]
    group = result["report"]["distributed"]
    assert (group["world_size"], group["backend"]) == (2, "gloo")
    assert [rank["status"] for rank in group["ranks"]] == ["ok", "ok"]
    assert result["report"]["eager"]["timed"]["eager"]["samples"]
    seen = rank_views(result["tail"])
    ranks = {entry["rank"]: entry for entry in seen}
    assert set(ranks) == {0, 1}, result["tail"][-20:]
    for entry in ranks.values():
        assert entry["world"] == 2 and entry["uid"] != 0
        assert entry["interfaces"] == ["lo"]
        assert entry["repo_write"] != "ok"
        assert entry["shm_bytes"] >= 2**30  # NCCL's transport (child_launcher.DISTRIBUTED_SHM)
    assert not (repo / "written-by-a-rank.txt").exists()
