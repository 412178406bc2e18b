"""Resource limits on the real engine (issue 21 item 4): a measuring child that fork-bombs,
allocates past its memory limit or prints 200 MiB without a newline, each in its own
container started by the real ContainerLauncher (the launcher of `matrix --against`). Each
attack is bounded by the test itself (forks stop at 2000, memory at 4 GiB) so that code
without the limits does not hurt the machine; with them the child is an error naming the
limit, and the parent's memory stays bounded whatever the child prints.

The launcher runs in a driver process of its own, so its peak RSS is the parent's
alone: VmHWM of its own memory, not getrusage's ru_maxrss, which Linux carries across
execve from the process that started it (pytest, hundreds of MiB once torch is imported)."""

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

PRELUDE = """
import os
import time

import torch
from torch import nn


def tiny_step(device="cpu"):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    xs = torch.randn(2, 4)
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
            "batch": lambda i: xs, "loss": lambda m, x: m(x).sum()}
"""
FORK_BOMB = """
def make_step(device="cpu"):
    children = []
    try:
        while len(children) < 2000:  # bounded: without a pids limit it stops here
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        print(f"fork refused after {len(children)} forks: {exc.strerror}", flush=True)
    print(f"forks: {len(children)}", flush=True)
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return tiny_step(device)
"""
MEMORY_HOG = """
def make_step(device="cpu"):
    kept = []
    for _ in range(64):  # bounded: 4 GiB, touched page by page
        kept.append(bytearray(64 << 20))
    print(f"allocated {len(kept) * 64} MiB", flush=True)
    return tiny_step(device)
"""
FLOOD = """
def make_step(device="cpu"):
    chunk = b"x" * (1 << 20)
    for _ in range(200):  # 200 MiB, not one newline
        os.write(1, chunk)
    return tiny_step(device)
"""
DRIVER = """
import json, sys, time


def peak_mib():  # this process's own peak (VmHWM): ru_maxrss survives execve
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    return int(status.split()[0]) / 1024


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
launcher = ContainerLauncher(docker.from_env(timeout=600), image, stream=open("/dev/null", "w"))
started = time.perf_counter()
outcome = launcher.run(spec, label="attack", timeout_s=480)
said = failure_text(outcome.failure) if outcome.failure else None
out.write_text(json.dumps({
    "error": said, "has_document": outcome.report is not None,
    "tail": outcome.output_tail, "wall_s": time.perf_counter() - started,
    "maxrss_mib": peak_mib(),
}))
"""


def attack(image: str, tmp_path: Path, body: str, limits: str) -> dict[str, Any]:
    """Run the attack's factory in one eager child under `limits` (YAML flow mapping)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "step.py").write_text(PRELUDE + body)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: attack\n    entry: step.py:make_step\n"
        "    device: cpu\n    variants: [{backend: eager}]\n    warmup: 1\n    iterations: 4\n"
        f"    rounds: 2\n    threads: 1\n    numerics: {{enabled: false}}\n    limits: {limits}\n"
    )
    out = tmp_path / "outcome.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, image, str(repo), str(out)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    print(json.dumps({k: v for k, v in result.items() if k != "tail"}))
    return result


def test_a_fork_bomb_is_stopped_at_the_pids_limit_and_is_an_error(
    local_torch_image: Any, tmp_path: Path
) -> None:
    result = attack(local_torch_image.tag, tmp_path, FORK_BOMB, "{pids: 64}")
    assert result["error"] is not None and result["error"].startswith("pids limit 64 reached")
    assert not result["has_document"]
    forks = [line for line in result["tail"] if line.startswith("forks: ")]
    assert forks and int(forks[-1].split()[1]) < 64


def test_a_step_over_its_memory_limit_is_killed_and_the_error_names_the_limit(
    local_torch_image: Any, tmp_path: Path
) -> None:
    result = attack(local_torch_image.tag, tmp_path, MEMORY_HOG, "{memory_mib: 768}")
    assert result["error"] is not None
    assert result["error"].startswith("killed: out of memory (limit 768 MiB)")
    assert not result["has_document"]


def test_200_mib_without_a_newline_keeps_the_parent_small(
    local_torch_image: Any, tmp_path: Path
) -> None:
    result = attack(local_torch_image.tag, tmp_path, FLOOD, "{log_mib: 16}")
    assert result["maxrss_mib"] < 150, result["maxrss_mib"]
    assert result["error"] is None and result["has_document"]
    assert any("line cut" in line for line in result["tail"])
