"""The compile-cost levers a team pulls (issue 42), each with its break-even, in fresh processes.

The example transformer step (examples/transformer_step.py:make_step, the README's demo; its
encoder layers are an `nn.ModuleList` of identical `TransformerEncoderLayer`s) run eagerly and
compiled, one fresh process per measurement, each with its own empty TORCHINDUCTOR_CACHE_DIR
unless the case says otherwise:

  cold       whole-model torch.compile, empty caches; the process then calls
             torch.compiler.save_cache_artifacts() and writes the bytes for `artifacts`
  warm       whole-model compile, the Inductor cache directory that repeat's cold process filled
  artifacts  whole-model compile, an EMPTY cache directory, torch.compiler.load_cache_artifacts
             (the cold process's bytes) called first; the load is inside the compile window
  regional   each block of the ModuleList replaced by torch.compile(block), instead of the
             whole model (the blocks are one code object: one compile serves them all)
  block-compile  `block.compile()` on each block instead; absent when it compiled no graph
  nested     whole-model compile with the block class's forward wrapped in
             torch.compiler.nested_compile_region (hierarchical compilation), inductor called
             through a backend that records the invoke_subgraph calls traced; absent when none

Compile seconds = wall time from the compile call (or the artifact load) to the end of the
first training step (zero_grad, forward+loss, backward, optimizer step) minus the median steady
compiled step. Steady step times: median of N steps after warm-up, eager and compiled copies
(same seed) interleaved step by step in the same process. Break-even = compile s / (eager ms −
compiled ms); "never" when the compiled step is not faster. CPU s: the compile window's CPU
seconds of the process tree (compilegate.child.compile_cost.tree_cpu_s: less load-sensitive).
A lever whose API this torch lacks prints "absent: <why>". Every case runs `--repeats` times.

Run: `python bench/compile_levers.py [--repeats 3] [--steps 40] [--quick] [--threads 1]`.
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
CASES = ("cold", "warm", "artifacts", "regional", "block-compile", "nested")

CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from compilegate.child.compile_cost import tree_cpu_s
import torch

case, step_file, func, steps, warmup, threads, blob = sys.argv[2:9]
steps, warmup, threads = int(steps), int(warmup), int(threads)
torch.set_num_threads(threads)
sys.path.insert(0, os.path.dirname(step_file))
factory = getattr(__import__(os.path.splitext(os.path.basename(step_file))[0]), func)
out = {"case": case, "torch": torch.__version__}

def absent(why):
    out["absent"] = why
    print(json.dumps(out))
    sys.exit(0)

def build():
    torch.manual_seed(0)
    return factory(device="cpu")

def blocks_of(model):
    lists = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) > 1
             and len({type(b) for b in m}) == 1]
    if not lists:
        absent("no nn.ModuleList of identical blocks in the model")
    return lists[0]

def run_step(parts, model, i):
    parts["optimizer"].zero_grad(set_to_none=True)
    loss = parts["loss"](model, parts["batch"](i))
    loss.backward()
    parts["optimizer"].step()

needs = {"artifacts": ("save_cache_artifacts", "load_cache_artifacts"),
         "nested": ("nested_compile_region",)}
if case == "block-compile" and not hasattr(torch.nn.Module, "compile"):
    absent("torch %s has no nn.Module.compile()" % torch.__version__)
for name in needs.get(case, ()):
    if not hasattr(torch.compiler, name):
        absent("torch %s has no torch.compiler.%s" % (torch.__version__, name))

eager = build()
compiled = build()
model = compiled["model"]
blocks = blocks_of(model) if case in ("regional", "block-compile", "nested") else None
if blocks is not None:
    out["blocks"] = "%d x %s" % (len(blocks), type(blocks[0]).__name__)

from torch._dynamo.utils import counters
counters.clear()
def so_files():
    # C++ kernel libraries in the cache directory: what g++ built
    walk = os.walk(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    return sum(name.endswith(".so") for _, _, names in walk for name in names)
so0 = so_files()
cpu0 = tree_cpu_s()
t0 = time.perf_counter()
if case == "artifacts":
    with open(blob, "rb") as f:
        info = torch.compiler.load_cache_artifacts(f.read())
    out["load_s"] = time.perf_counter() - t0
    out["loaded"] = {k: len(v) for k, v in info.artifacts.items()} if info is not None else None
subgraphs = []
def recording_backend(gm, example_inputs):
    # inductor as torch.compile's default uses it, recording the invoke_subgraph calls traced
    from torch._inductor.compile_fx import compile_fx
    subgraphs.extend(n for n in gm.graph.nodes if "invoke_subgraph" in str(n.target))
    return compile_fx(gm, example_inputs)
if case == "regional":
    for i in range(len(blocks)):
        blocks[i] = torch.compile(blocks[i])
    target = model
elif case == "block-compile":
    for block in blocks:
        block.compile()
    target = model
elif case == "nested":
    cls = type(blocks[0])
    cls.forward = torch.compiler.nested_compile_region(cls.forward)
    target = torch.compile(model, backend=recording_backend)
else:
    target = torch.compile(model)
run_step(compiled, target, 0)
first_s = time.perf_counter() - t0
out["compile_cpu_s"] = tree_cpu_s() - cpu0
out["graphs"] = counters["stats"]["unique_graphs"]
out["so_built"] = so_files() - so0
if case == "block-compile" and out["graphs"] == 0:
    absent("block.compile() on each %s compiled no graph: Dynamo skips torch.nn's own "
           "Module._call_impl (skipfiles), so the blocks ran eagerly" % out["blocks"])
if case == "nested":
    out["invoke_subgraph_nodes"] = len(subgraphs)
if case == "nested" and not subgraphs:
    absent("nested_compile_region on %s.forward traced no invoke_subgraph: Dynamo inlined "
           "the block (%d graph(s), as whole-model compile)"
           % (type(blocks[0]).__name__, out["graphs"]))
out["inductor"] = {k: v for k, v in counters["inductor"].items()
                   if "cache" in k and ("hit" in k or "miss" in k)}
out["aot_autograd"] = {k: v for k, v in counters["aot_autograd"].items()
                       if "hit" in k or "miss" in k}
out["recompiles"] = sum(counters["recompiles"].values()) if "recompiles" in counters else None

run_step(eager, eager["model"], 0)
for i in range(1, warmup + 1):
    run_step(eager, eager["model"], i)
    run_step(compiled, target, i)
eager_ms, compiled_ms = [], []
for i in range(warmup + 1, warmup + 1 + steps):
    t = time.perf_counter(); run_step(eager, eager["model"], i)
    eager_ms.append((time.perf_counter() - t) * 1e3)
    t = time.perf_counter(); run_step(compiled, target, i)
    compiled_ms.append((time.perf_counter() - t) * 1e3)
out["eager_ms"] = statistics.median(eager_ms)
out["compiled_ms"] = statistics.median(compiled_ms)
out["compile_s"] = first_s - out["compiled_ms"] / 1e3
out["graphs_after"] = counters["stats"]["unique_graphs"]

if case == "cold":
    if not hasattr(torch.compiler, "save_cache_artifacts"):
        out["saved"] = ("absent: torch %s has no torch.compiler.save_cache_artifacts"
                        % torch.__version__)
    else:
        saved = torch.compiler.save_cache_artifacts()
        if saved is None:
            out["saved"] = "save_cache_artifacts() returned None"
        else:
            data, info = saved
            with open(blob, "wb") as f:
                f.write(data)
            out["saved"] = {"bytes": len(data), **{k: len(v) for k, v in info.artifacts.items()}}
print(json.dumps(out))
"""


def one_process(case: str, args: argparse.Namespace, cache: str, blob: str) -> dict:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", cache),
        "TORCHINDUCTOR_CACHE_DIR": cache,
        "TRITON_CACHE_DIR": f"{cache}/triton",
    }
    file, func = args.step.rsplit(":", 1)
    command = [args.python, "-c", CHILD, str(REPO_ROOT / "runner"), case, str(REPO_ROOT / file),
               func, str(args.steps), str(args.warmup), str(args.threads), blob]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        return {"case": case, "failed": done.stderr.strip().splitlines()[-1:] or ["(no stderr)"]}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - start
    return result


def one_repeat(args: argparse.Namespace) -> list[dict]:
    """cold fills a cache directory and writes the artifacts; warm reuses that directory;
    artifacts, regional and nested each start from an empty one."""
    results = []
    with tempfile.TemporaryDirectory(prefix="compilegate-levers-") as root:
        filled, blob = f"{root}/filled", f"{root}/artifacts.bin"
        for case in args.cases:
            cache = filled if case in ("cold", "warm") else f"{root}/{case}"
            if case == "warm" and not os.path.isdir(filled):
                results.append({"case": case, "absent": "needs the cold case in the same run"})
                continue
            if case == "artifacts" and not os.path.exists(blob):
                results.append({"case": case, "absent": "no artifacts written by a cold process"})
                continue
            os.makedirs(cache, exist_ok=True)
            result = one_process(case, args, cache, blob)
            results.append(result)
            print("  " + describe(result), flush=True)
    return results


def describe(r: dict) -> str:
    if "absent" in r:
        return f"{r['case']:13s} absent: {r['absent']}"
    if "failed" in r:
        return f"{r['case']:13s} FAILED: {r['failed'][0]}"
    parts = [
        f"{r['case']:13s} compile {r['compile_s']:6.2f} s (cpu {r['compile_cpu_s']:6.2f} s)",
        f"eager {r['eager_ms']:6.2f} ms  compiled {r['compiled_ms']:6.2f} ms",
        f"graphs {r['graphs']}→{r['graphs_after']}  .so built {r['so_built']}",
    ]
    caches = {**r["inductor"], **r["aot_autograd"]}
    if caches:
        parts.append(" ".join(f"{k}={v}" for k, v in sorted(caches.items())))
    if r.get("recompiles"):
        parts.append(f"recompiles {r['recompiles']}")
    if "blocks" in r:
        parts.append(f"blocks {r['blocks']}")
    if "invoke_subgraph_nodes" in r:
        parts.append(f"invoke_subgraph nodes {r['invoke_subgraph_nodes']}")
    if "load_s" in r:
        parts.append(f"load {r['load_s']:.2f} s, loaded {r['loaded']}")
    if "saved" in r:
        parts.append(f"saved {r['saved']}")
    parts.append(f"process {r['process_s']:.0f} s")
    return "  ".join(parts)


def spread(values: list[float], fmt: str) -> str:
    return "/".join(format(v, fmt) for v in (min(values), statistics.median(values), max(values)))


def break_even(compile_s: float, eager_ms: float, compiled_ms: float) -> str:
    gain_ms = eager_ms - compiled_ms
    if gain_ms <= 0:
        return "never (not faster)"
    return f"{compile_s / (gain_ms / 1e3):,.0f}"


def summary(all_results: list[dict], cases: tuple[str, ...]) -> None:
    print("\nper case, min/median/max over repeats:")
    rows = []
    for case in cases:
        mine = [r for r in all_results if r["case"] == case]
        good = [r for r in mine if "compile_s" in r]
        if not good:
            why = next((r.get("absent") or r.get("failed", ["?"])[0] for r in mine), "not run")
            print(f"  {case:13s} absent: {why}")
            rows.append((case, "absent", why, "", ""))
            continue
        compile_s = [r["compile_s"] for r in good]
        cpu_s = [r["compile_cpu_s"] for r in good]
        eager = [r["eager_ms"] for r in good]
        comp = [r["compiled_ms"] for r in good]
        ratio = [r["compiled_ms"] / r["eager_ms"] for r in good]
        print(
            f"  {case:13s} compile s {spread(compile_s, '.2f')}  cpu s {spread(cpu_s, '.2f')}  "
            f"eager ms {spread(eager, '.2f')}  compiled ms {spread(comp, '.2f')}  "
            f"compiled/eager {spread(ratio, '.2f')}  ({len(good)} of {len(mine)} processes)"
        )
        med = statistics.median
        rows.append((
            case,
            f"{med(compile_s):.2f}",
            f"{med(comp):.2f}",
            f"{med(eager):.2f}",
            break_even(med(compile_s), med(eager), med(comp)),
        ))  # fmt: skip
    print("\n| lever | compile s (median) | compiled step ms | eager step ms | break-even steps |")
    print("|---|---:|---:|---:|---:|")
    for case, compile_s, comp, eager, even in rows:
        if compile_s == "absent":
            print(f"| {case} | absent: {comp} | | | |")
        else:
            print(f"| {case} | {compile_s} | {comp} | {eager} | {even} |")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))  # fmt: skip
    parser.add_argument("--python", default=sys.executable, help="the Python whose torch runs")
    parser.add_argument(
        "--step",
        default="examples/transformer_step.py:make_step",
        help="FILE:FUNC of a step factory, relative to the repository",
    )
    parser.add_argument("--repeats", type=int, default=3, help="processes per case (3)")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per side (40)")
    parser.add_argument("--warmup", type=int, default=5, help="steps before timing (5)")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads per process (1, as the demo's config)"
    )
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}"
    )
    parser.add_argument("--quick", action="store_true", help="1 repeat, 15 steps, 3 warm-up")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.steps, args.warmup = 1, 15, 3
    args.cases = tuple(c for c in args.cases.split(",") if c)
    unknown = set(args.cases) - set(CASES)
    if unknown:
        parser.error(f"--cases: unknown {','.join(sorted(unknown))}; known: {','.join(CASES)}")
    start = time.perf_counter()
    print(f"{args.step}, {args.repeats} repeats, {args.steps} steps, {args.warmup} warm-up, "
          f"{args.threads} thread(s); load at start: {os.getloadavg()[0]:.2f}")  # fmt: skip
    results = []
    for repeat in range(args.repeats):
        print(f"repeat {repeat + 1}:", flush=True)
        results.extend(one_repeat(args))
    torch_version = next((r["torch"] for r in results if "torch" in r), "?")
    summary(results, args.cases)
    print(f"\ntorch {torch_version}; {time.perf_counter() - start:.0f} s in all; "
          f"load at end: {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
