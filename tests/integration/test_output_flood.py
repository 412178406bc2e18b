"""A measuring child on the host (the venv backend's and `compilegate run`'s launcher) that
prints 200 MiB without a newline: the parent reads its output in bounded chunks, so its
peak RSS stays where it was, and the child's run ends with its result (issue 21 item 4:
the old line reader held the whole line, 200 MiB cost 619 MiB and 60 s of CPU). The
launcher runs in a driver process of its own, so its peak RSS is the parent's alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repo_helpers import REPO_ROOT

STEP = """
import os

import torch
from torch import nn


def make_step(device="cpu"):
    chunk = b"x" * (1 << 20)
    for _ in range(200):  # 200 MiB, not one newline
        os.write(1, chunk)
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    xs = torch.randn(2, 4)
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
            "batch": lambda i: xs, "loss": lambda m, x: m(x).sum()}
"""
CONFIG = """\
version: 1
steps:
  - name: flood
    entry: step.py:make_step
    device: cpu
    variants: [{backend: eager}]
    warmup: 1
    iterations: 4
    rounds: 2
    threads: 1
    numerics: {enabled: false}
"""
DRIVER = """
import json, resource, sys, time


def peak_mib():  # this process's own peak (VmHWM): ru_maxrss survives execve
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    return int(status.split()[0]) / 1024


from pathlib import Path
from compilegate.child.protocol import ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import failure_text
from compilegate.run.entry_check import resolve_entry
from compilegate.run.launcher import ChildLauncher

repo, out = Path(sys.argv[1]), Path(sys.argv[2])
step = load_config_file(repo / "compilegate.yml", repo_root=repo).steps[0]
entry = resolve_entry(step.entry, repo, "test")
spec = ChildSpec(kind="eager", repo_root=str(repo), entry=entry, step=step.name, device="cpu",
                 settings=step.measurement_settings())
launcher = ChildLauncher(stream=open("/dev/null", "w"))
started = time.perf_counter()
outcome = launcher.run(spec, label="flood", timeout_s=240)
usage = resource.getrusage(resource.RUSAGE_SELF)
said = failure_text(outcome.failure) if outcome.failure else None
out.write_text(json.dumps({
    "error": said, "has_document": outcome.report is not None,
    "tail": outcome.output_tail, "wall_s": time.perf_counter() - started,
    "maxrss_mib": peak_mib(), "cpu_s": usage.ru_utime + usage.ru_stime,
}))
"""


def test_200_mib_without_a_newline_keeps_the_host_parent_small(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "step.py").write_text(STEP)
    (repo / "compilegate.yml").write_text(CONFIG)
    out = tmp_path / "outcome.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(repo), str(out)],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    print(json.dumps({k: v for k, v in result.items() if k != "tail"}))
    assert result["maxrss_mib"] < 150, result["maxrss_mib"]
    assert result["error"] is None and result["has_document"]
    assert any("line cut" in line for line in result["tail"])
