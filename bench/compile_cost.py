"""Compile cost three ways, idle and under load: wall, CPU of the process tree, work counts.

Each sample is a fresh process with a fresh Inductor (and Triton) cache directory that
compiles a step cold the way the child does (child/compile_cost.py, diagnostics.CompileProbe):
the window runs from the torch.compile() call to the end of the first iteration's backward
and optimizer step. Printed per sample: wall s; CPU s of the tree (this process, reaped
children, live compile workers read from /proc); CPU s as RUSAGE_SELF + RUSAGE_CHILDREN alone
(what misses live pool workers); the cost of one /proc walk; torch's work counts.
`--load N` starts N busy-loop processes for the whole run; samples alternate nothing else.

Run: `python bench/compile_cost.py [--python PY] [--step FILE:FUNC] [--runs 3] [--load 2]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from compilegate.child.compile_cost import now, elapsed, tree_cpu_s
from compilegate.child.diagnostics import CompileProbe
from compilegate.child.measure import StepBuilder
from compilegate.child.training import TrainingStep
from compilegate.run.entry_check import resolve_entry
from pathlib import Path
import torch

def rusage_s():
    a = resource.getrusage(resource.RUSAGE_SELF); b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

repo = Path(sys.argv[2])
builder = StepBuilder(resolve_entry(sys.argv[3], repo, "bench"), repo, "cpu", 0)
parts = builder.build()
probe = CompileProbe(repo_root=repo)
with probe:
    start, ru0 = now(), rusage_s()
    step = TrainingStep(parts, device="cpu", compile_kwargs={}, compile_target="model")
    step(0)
    window, ru1 = elapsed(start, now()), rusage_s()
t = time.perf_counter()
for _ in range(10):
    tree_cpu_s()
walk_ms = (time.perf_counter() - t) * 100
print(json.dumps({"wall_s": window.wall_s, "cpu_s": window.cpu_s, "rusage_s": ru1 - ru0,
                  "walk_ms": walk_ms, "counts": probe.work_counts(), "torch": torch.__version__}))
"""


def one_sample(python: str, step: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="compilegate-bench-") as cache:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": cache,
            "TORCHINDUCTOR_CACHE_DIR": cache,
            "TRITON_CACHE_DIR": f"{cache}/triton",
        }
        done = subprocess.run(
            [python, "-c", CHILD, str(REPO_ROOT / "runner"), str(REPO_ROOT), step],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"sample failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--step", default="examples/test_steps/fp32_mlp.py:make_step")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes meanwhile")
    args = parser.parse_args()
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)
    ]
    try:
        samples = [one_sample(args.python, args.step) for _ in range(args.runs)]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    print(f"{args.step}, torch {samples[0]['torch']}, --load {args.load}, {args.runs} runs")
    print("  wall_s  cpu_s(tree)  cpu_s(rusage only)  /proc walk ms  counts")
    for s in samples:
        counts = " ".join(f"{k}={v}" for k, v in s["counts"].items())
        print(
            f"  {s['wall_s']:6.1f}  {s['cpu_s']:11.1f}  {s['rusage_s']:18.1f}  "
            f"{s['walk_ms']:13.1f}  {counts}"
        )
    for key in ("wall_s", "cpu_s", "rusage_s"):
        values = [s[key] for s in samples]
        print(
            f"  {key}: median {statistics.median(values):.1f}, range {min(values):.1f}-"
            f"{max(values):.1f}"
        )
    distinct = {json.dumps(s["counts"], sort_keys=True) for s in samples}
    print(f"  counts identical in all runs: {len(distinct) == 1}")


if __name__ == "__main__":
    main()
