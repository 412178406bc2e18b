"""What every measuring process pays before its first compiled step, whatever the step
(issue 40: the seconds between a run and 1.5 × its cold compiles plus timed rounds).

A variant's warm process (one that compiles from the cache the first process filled) spends
about 3 s of wall time in its compile window on this project's CPU, of which its step's own
re-trace and cache loads are well under one. The rest is Inductor's once-per-process set-up,
which a user's first `torch.compile()` in a fresh process pays too. This prints each part,
each measured in a fresh interpreter (`--repeat` times; minimum, median, maximum):

- `python -c "import torch"`: the interpreter and torch, then in one interpreter importing
  torch, Dynamo and Inductor's `compile_fx` (what `torch.compile()` imports first), in turn
  (a process started ahead of its turn hides the first two: run/child_process.py);
- Inductor's CPU vector-ISA probe (`valid_vec_isa_list`): it builds a test library per
  candidate ISA and loads each in a new Python that imports torch, to survive an ISA the
  compiler accepts and the CPU refuses. Wall and CPU seconds of the process and its children;
- a warm compile of the example step (`--entry`) from a cache a cold compile filled first:
  the compile window's wall and the main process's CPU seconds, and how much of the window
  the ISA probe took (it runs inside the first compile of every process, cold or warm); and
  the same for that cold compile, in a fresh cache, where the probe also builds its test
  libraries (g++ with torch's headers, per candidate ISA).

    python bench/process_fixed_costs.py [--repeat 3]
        [--entry examples/transformer_step.py:make_step]

On this project's 2-core CPU, idle (2026-12-07, torch 2.13.0+cpu), medians of 3: `python -c
"import torch"` 1.73 s; in one interpreter torch 1.10 s, Dynamo 1.13 s, compile_fx 0.88 s, the
ISA probe 1.36 s (1.22 CPU-s); a warm compile window 3.11 s (1.67 CPU-s in the main process),
1.36 s of it the ISA probe. The cold compile: 25.7 s, 8.4 s of it the ISA probe. Discussed in
docs/numbers.md ("Where a run's time goes").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

# One fresh interpreter: each import and the probe, timed in order (stdout: one JSON line).
PARTS = r"""
import json, resource, sys, time
def clock():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
out = {}
def part(name, work):
    wall, cpu = clock()
    work()
    wall2, cpu2 = clock()
    out[name] = [wall2 - wall, cpu2 - cpu]
part("torch", lambda: __import__("torch"))
part("dynamo", lambda: __import__("torch._dynamo"))
part("compile_fx", lambda: __import__("torch._inductor.compile_fx"))
def probe():
    from torch._inductor import cpu_vec_isa
    cpu_vec_isa.valid_vec_isa_list()
part("isa_probe", probe)
print(json.dumps(out))
"""

# A compile of the entry's model in the cache TORCHINDUCTOR_CACHE_DIR names: the window from
# the torch.compile() call to the end of the first compiled step, and what the probe took.
COMPILE = r"""
import importlib.util, json, sys, time
import torch
torch.set_num_threads(1)
from torch._inductor import cpu_vec_isa
spans = []  # the compile's threads may probe at once: the union of their spans is timed
original = cpu_vec_isa.valid_vec_isa_list
def timed_probe():
    start = time.perf_counter()
    try:
        return original()
    finally:
        spans.append((start, time.perf_counter()))
timed_probe.cache_clear = original.cache_clear
cpu_vec_isa.valid_vec_isa_list = timed_probe
path, name = sys.argv[1].rsplit(":", 1)
spec = importlib.util.spec_from_file_location("entry", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
step = getattr(module, name)(device="cpu")
model, optimizer, batch, loss = step["model"], step["optimizer"], step["batch"], step["loss"]
for i in range(2):  # eager warm-up, outside the window
    optimizer.zero_grad(set_to_none=True)
    loss(model, batch(i)).backward()
    optimizer.step()
start, cpu = time.perf_counter(), time.process_time()
compiled = torch.compile(model)
optimizer.zero_grad(set_to_none=True)
loss(compiled, batch(2)).backward()
optimizer.step()
out = {"window": [time.perf_counter() - start, time.process_time() - cpu]}
covered, reached = 0.0, 0.0
for begin, end in sorted(spans):
    covered += max(0.0, end - max(begin, reached))
    reached = max(reached, end)
out["isa_probe_in_window"] = covered
print(json.dumps(out))
"""


def run_json(argv: list[str], env: dict[str, str]) -> dict:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"{argv[1][:40]!r}… failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float]) -> str:
    return f"{min(values):5.2f} {statistics.median(values):5.2f} {max(values):5.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--entry", default="examples/transformer_step.py:make_step")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    entry = str(REPO_ROOT / args.entry)
    rows: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="fixed-costs-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
        cold = run_json([args.python, "-c", COMPILE, entry], env)
        wall, probe = cold["window"][0], cold["isa_probe_in_window"]
        print(
            f"cold compile in a fresh cache: {wall:.1f} s wall, of it the ISA probe {probe:.1f} s"
        )
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run([args.python, "-c", "import torch"], check=True, env=env)
            rows.setdefault("python -c 'import torch', wall", []).append(
                time.perf_counter() - start
            )
            for name, (wall, cpu) in run_json([args.python, "-c", PARTS], env).items():
                rows.setdefault(f"{name}, wall", []).append(wall)
                rows.setdefault(f"{name}, CPU (with its children)", []).append(cpu)
            warm = run_json([args.python, "-c", COMPILE, entry], env)
            rows.setdefault("warm compile window, wall", []).append(warm["window"][0])
            rows.setdefault("warm compile window, CPU (main process)", []).append(warm["window"][1])
            rows.setdefault("  of it the ISA probe, wall", []).append(warm["isa_probe_in_window"])
    print(f"{'seconds, min median max':<44} over {args.repeat} fresh processes each")
    for name, values in rows.items():
        print(f"{name:<44} {spread(values)}")


if __name__ == "__main__":
    main()
