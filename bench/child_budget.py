"""Which limit measures the step, not the machine (run/child_budget.py): a child's wall
seconds, its wall seconds scaled by the load it saw, or its CPU seconds — idle and under
busy loops.

Each sample is a fresh child process, as a measuring child is (own session, fresh Inductor
cache): it imports torch, compiles a small MLP's training step cold (compile workers, the
C++ compiler) and runs it. The parent polls the child's process group every 0.5 s (CPU
seconds from /proc: run/child_budget.group_cpu_s) and the 1-minute load average. Printed per
sample: wall s, CPU s, mean load, and the wall s divided by max(1, load / CPUs) — what a
load-scaled limit compares. The summary gives each figure under load relative to idle: the
closer to 1, the less the limit measures the machine.

Run: `PYTHONPATH=runner:bench python bench/child_budget.py [--runs 2] [--load 2]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_common import busy_loops

from compilegate.run.child_budget import group_cpu_s

CHILD = r"""
import torch
from torch import nn
torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(),
                      nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
compiled = torch.compile(model)
x = torch.randn(32, 64)
for _ in range(200):
    opt.zero_grad()
    compiled(x).sum().backward()
    opt.step()
"""


def sample() -> dict[str, float]:
    """One cold child: wall s, CPU s of its process group, mean 1-minute load."""
    with tempfile.TemporaryDirectory(prefix="child-budget-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, start_new_session=True)
        cpu_s, loads = 0.0, []
        while True:
            try:
                child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                cpu_s = max(cpu_s, group_cpu_s(child.pid) or 0.0)
                loads.append(os.getloadavg()[0])
        wall_s = time.monotonic() - started
    if child.returncode != 0:
        raise SystemExit(f"the child failed with code {child.returncode}")
    load = statistics.mean(loads) if loads else os.getloadavg()[0]
    scaled = wall_s / max(1.0, load / (os.cpu_count() or 1))
    return {"wall_s": wall_s, "cpu_s": cpu_s, "load": load, "scaled_s": scaled}


def run(runs: int) -> list[dict[str, float]]:
    samples = []
    for _ in range(runs):
        samples.append(sample())
        s = samples[-1]
        print(
            f"  wall {s['wall_s']:6.1f} s  CPU {s['cpu_s']:6.1f} s  load {s['load']:4.1f}  "
            f"wall/load-scale {s['scaled_s']:6.1f} s",
            flush=True,
        )
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--load", type=int, default=2, help="busy loops for the loaded pass")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; load before: {os.getloadavg()[0]:.1f}")
    print("without added load:")
    idle = run(args.runs)
    print(f"under {args.load} busy loops:")
    with busy_loops(args.load):
        loaded = run(args.runs)
    print("loaded / idle (median): the closer to 1, the less the limit measures the machine")
    for key, name in (
        ("wall_s", "wall seconds"),
        ("scaled_s", "wall / max(1, load/CPUs)"),
        ("cpu_s", "CPU seconds"),
    ):
        ratio = statistics.median(s[key] for s in loaded) / statistics.median(s[key] for s in idle)
        print(f"  {name:26} ×{ratio:.2f}")


if __name__ == "__main__":
    main()
