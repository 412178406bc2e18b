"""Which yardstick follows a small step, process to process, on a loaded machine (issue 28).

Each of `--processes` fresh child processes builds a small training step (an MLP of three
Linear layers, 64 wide, 16 rows: many small ops, dispatch-bound on a CPU) and times it in
interleaved rounds beside both yardsticks (child/timing.py: the GPU-bound matmul one and the
launch-bound chain of tiny kernels), one thread, as the measuring child does. Meanwhile
`--load N` busy loops come and go every `--load-period` seconds (bench/gate_power.py's
intermittent_busy_loops), so processes land on a quiet or a loaded host. Per yardstick: the
correlation across processes of log(step) with log(yardstick), the spread of step/yardstick
(results/yardsticks.pooled_log_spread), and which one results/yardsticks.tracking_yardstick
picks. On a CPU both yardsticks are host-bound; on a CUDA host only the launch-bound one
follows the host's dispatch speed.

    python bench/yardsticks.py [--processes 16] [--load 2] [--load-period 4] [--device cpu]

On the shared 2-core machine (2026-12-05), 16 processes, --load 2 every 2 s, 110 s: the
step's fastest iteration spread ±1.1 % between processes; divided by the GPU-bound
yardstick ±1.3 % (r = +0.05), by the launch-bound one ±2.0 % (r = +0.39); medians ±2.4 %,
±2.1 % (r = +0.51), ±2.5 % (r = +0.48). Every 4 s: ±0.9 %, ±0.8 % (r = +0.37), ±1.7 %
(r = -0.13). Busy loops on a second core barely move a one-thread step's fastest iteration
here, and neither yardstick follows what is left; the pick was the GPU-bound one both
times. The drift the launch-bound one is for (a host dispatching a CUDA step) needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from gate_power import intermittent_busy_loops  # noqa: E402

from compilegate.results.processes import GPU_BOUND, LAUNCH_BOUND, eager_values  # noqa: E402
from compilegate.results.yardsticks import pooled_log_spread, tracking_yardstick  # noqa: E402


def child(device: str, iterations: int, rounds: int) -> dict:
    """One process: the small step and both yardsticks, fastest iteration of each (ms)."""
    import torch
    from torch import nn

    from compilegate.child.timing import interleaved_rounds, timer_for, yardsticks

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(16, 64, device=device)
    y = torch.randn(16, 8, device=device)

    def step(index: int) -> None:
        optimizer.zero_grad(set_to_none=True)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()

    for index in range(10):
        step(index)
    timed = interleaved_rounds(
        {"eager": step, **yardsticks(device)},
        first_index=10,
        iterations=iterations,
        rounds=rounds,
        timer=timer_for(device),
    )
    fastest = {side: min(value["samples"]) for side, value in timed.items()}
    medians = {
        f"{side}_median": statistics.median(value["samples"]) for side, value in timed.items()
    }
    return {**fastest, **medians}


def correlation(xs: list[float], ys: list[float]) -> float:
    lx, ly = [math.log(v) for v in xs], [math.log(v) for v in ys]
    return statistics.correlation(lx, ly)


def record(fastest: dict) -> dict:
    """The child's figures as a process record (results/processes.py)."""
    return {
        "fastest_ms": {
            "eager": fastest["eager"],
            **{k: fastest[k] for k in (GPU_BOUND, LAUNCH_BOUND)},
        }
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--load", type=int, default=2, help="busy loops that come and go")
    parser.add_argument("--load-period", type=float, default=4.0, help="seconds on, then off")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.device, args.iterations, args.rounds)))
        return 0
    started = time.monotonic()
    rows = []
    with intermittent_busy_loops(args.load, args.load_period):
        for number in range(args.processes):
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    "--device",
                    args.device,
                    "--iterations",
                    str(args.iterations),
                    "--rounds",
                    str(args.rounds),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(out.stdout.splitlines()[-1]))
            print(
                f"process {number + 1:2d}: step {rows[-1]['eager']:.3f} ms, "
                f"GPU-bound yardstick {rows[-1][GPU_BOUND]:.3f} ms, "
                f"launch-bound {rows[-1][LAUNCH_BOUND]:.3f} ms",
                file=sys.stderr,
            )
    print(
        f"yardsticks · {args.processes} processes · --load {args.load} every "
        f"{args.load_period:g} s · {args.device} · {time.monotonic() - started:.0f} s"
    )
    for statistic, suffix in (
        ("fastest iteration (what the gate uses)", ""),
        ("median", "_median"),
    ):
        step = [r["eager" + suffix] for r in rows]
        spread = pooled_log_spread([step])
        print(
            f"per process, {statistic}: the step {statistics.median(step):.3f} ms, "
            f"spread ±{spread:.1f} %"
        )
        for name in (GPU_BOUND, LAUNCH_BOUND):
            stick = [r[name + suffix] for r in rows]
            ratios = [s / k for s, k in zip(step, stick)]
            print(
                f"  {name:17s} {statistics.median(stick):.3f} ms · correlation with the step "
                f"r = {correlation(step, stick):+.2f} · step/yardstick spread "
                f"±{pooled_log_spread([ratios]):.1f} %"
            )
    choice = tracking_yardstick([[record(r) for r in rows]], eager_values)
    print(f"picked: {choice.yardstick} ({choice.describe()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
