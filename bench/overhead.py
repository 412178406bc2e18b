"""How much does compilegate's own timing cost per iteration?

Compares, on the same eager step, a bare timed loop (one perf_counter around N plain
iterations: zero_grad, forward+loss, backward, optimizer.step) with the engine's loop
(TrainingStep + the per-iteration timer of timing.py). Repetitions are interleaved and the
median ratio printed. Run: `python bench/overhead.py [--step FILE:FUNC] [--n 200]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

import torch  # noqa: E402

from compilegate.child.measure import StepBuilder  # noqa: E402
from compilegate.child.timing import synchronize, timer_for  # noqa: E402
from compilegate.child.training import TrainingStep  # noqa: E402
from compilegate.run.entry_check import resolve_entry  # noqa: E402


def bare_loop(parts, indices, device) -> float:
    model, optimizer, batch, loss_fn = parts.model, parts.optimizer, parts.batch, parts.loss
    synchronize(device)
    start = time.perf_counter()
    for i in indices:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch(i))
        loss.backward()
        optimizer.step()
    synchronize(device)
    return (time.perf_counter() - start) / len(indices) * 1e3


def engine_loop(step, indices, device) -> float:
    timer = timer_for(device)
    synchronize(device)
    start = time.perf_counter()
    timer.time_block(step, indices)
    synchronize(device)
    return (time.perf_counter() - start) / len(indices) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", default="examples/test_steps/tiny_mlp.py:make_step")
    parser.add_argument("--n", type=int, default=200, help="iterations per repetition")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    entry = resolve_entry(args.step, REPO_ROOT, "--step")
    builder = StepBuilder(entry, REPO_ROOT, args.device, seed=0)
    bare_parts = builder.build()
    engine_step = TrainingStep(builder.build(), device=args.device)
    indices = list(range(args.n))
    bare_loop(bare_parts, indices[:20], args.device)
    engine_loop(engine_step, indices[:20], args.device)
    bare, engine = [], []
    for r in range(args.repeats):
        order = [("bare", bare_loop, bare_parts), ("engine", engine_loop, engine_step)]
        for name, loop, subject in order if r % 2 == 0 else order[::-1]:
            (bare if name == "bare" else engine).append(loop(subject, indices, args.device))
    ratios = [e / b for e, b in zip(engine, bare)]
    print(
        f"step {args.step} on {args.device}, torch {torch.__version__}, "
        f"{args.repeats} interleaved repetitions x {args.n} iterations"
    )
    print(f"{'loop':<8}{'median ms/iter':>16}{'min':>10}{'max':>10}")
    for name, values in (("bare", bare), ("engine", engine)):
        print(
            f"{name:<8}{statistics.median(values):>16.4f}{min(values):>10.4f}{max(values):>10.4f}"
        )
    print(
        f"overhead ratio engine/bare: median {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); "
        f"per-iteration cost {statistics.median(engine) - statistics.median(bare):+.4f} ms"
    )


if __name__ == "__main__":
    main()
