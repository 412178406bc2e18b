"""Does the gate cry wolf, and does it catch real regressions? Measured, printed as a table.

1. False alarms: the same config and code, run N times against a baseline from one run of
   that same code. Counts `regression` verdicts (target 0) and `inconclusive` ones.
2. Detection: a compiled-only slowdown planted at 10 %, 25 % and 50 % of the compiled step
   (a chain of small products traced only under torch.compiler.is_compiling(), see
   examples/test_steps/gate_step.py), M runs each: the fraction flagged `regression`.
   Its length is calibrated by two runs (growth fitted as a*N + b); the growth the planted
   runs actually measured (compiled step in yardstick units) is shown beside it.
3. Planted new graph break, recompile and numerics error: the fraction flagged.

Every run is a real `compilegate run` (child processes, torch.compile with Inductor) sharing
one Inductor cache, since compile time is not what this measures.

    python bench/gate_power.py [--runs 10] [--detect-runs 5] [--python PATH] [--device cpu]
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
sys.path.insert(0, str(REPO_ROOT / "runner"))

from compilegate.gate.compare import compare_to_baseline  # noqa: E402

SPEED_METRICS = ("speedup", "compiled_step_ms")
# A step of a couple of milliseconds on one CPU thread (examples/test_steps/gate_step.py).
STEP_SIZE = {"COMPILEGATE_GATE_WIDTH": "512", "COMPILEGATE_GATE_ROWS": "64"}
CONFIG = """\
version: 1
steps:
  - name: gate
    entry: examples/test_steps/gate_step.py:make_step
    device: {device}
    variants: [{{mode: default}}]
    warmup: 3
    iterations: {iterations}
    rounds: 10
    threads: {threads}
    env: [COMPILEGATE_PLANT, COMPILEGATE_PLANT_PRODUCTS, COMPILEGATE_GATE_WIDTH,
          COMPILEGATE_GATE_ROWS]
"""


def run_once(config: Path, out: Path, cache: Path, python: str, plant: dict[str, str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **STEP_SIZE, **plant}
    command = [
        sys.executable,
        "-m",
        "compilegate",
        "run",
        "--config",
        str(config),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(out),
        "--python",
        python,
        "--inductor-cache",
        str(cache),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if not out.is_file():
        raise SystemExit(f"gate_power: run failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.read_text())


def per_stick(document: dict) -> float:
    """The compiled step in yardstick units (see compilegate.timing.yardstick)."""
    return document["steps"][0]["variants"][0]["compiled_per_yardstick"]["median"]


def flagged(report, metrics: tuple[str, ...] | None = None) -> bool:
    return any(
        r.verdict == "regression" and (metrics is None or r.metric in metrics)
        for r in report.rows()
    )


def compiled_ms(document: dict) -> float:
    return document["steps"][0]["variants"][0]["step_ms"]["median"]


def products_for(growth_ms: float, fit: tuple[float, float]) -> int:
    """How many planted products give a growth of `growth_ms`, from cost = a*N + b."""
    a, b = fit
    return max(1, round(max(growth_ms - b, a) / a))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="A/A runs against the baseline")
    parser.add_argument("--detect-runs", type=int, default=5, help="runs per planted level")
    parser.add_argument("--plant-runs", type=int, default=3, help="runs per planted break kind")
    parser.add_argument("--levels", default="10,25,50", help="planted slowdowns, percent")
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="gate-power-"))
    config = work / "compilegate.yml"
    config.write_text(
        CONFIG.format(device=args.device, iterations=args.iterations, threads=args.threads)
    )
    cache = work / "inductor-cache"
    counter = iter(range(10_000))

    def run(plant: dict[str, str] | None = None) -> dict:
        return run_once(config, work / f"r{next(counter)}.json", cache, args.python, plant or {})

    print("warming the shared Inductor cache ...", file=sys.stderr)
    run()
    baseline = run()
    base_ms = compiled_ms(baseline)
    rows = []

    print(f"false alarms: {args.runs} runs of unchanged code ...", file=sys.stderr)
    aa_reports = [compare_to_baseline(baseline, run()) for _ in range(args.runs)]
    regressions = sum(flagged(r) for r in aa_reports)
    inconclusive = sum(any(x.verdict == "inconclusive" for x in r.rows()) for r in aa_reports)
    metric_hits = sorted(
        {x.metric for r in aa_reports for x in r.rows() if x.verdict == "regression"}
    )
    rows.append(
        (
            "unchanged code (A/A)",
            args.runs,
            f"{regressions}/{args.runs}",
            f"{inconclusive}/{args.runs}",
            ", ".join(metric_hits) or "-",
            "-",
        )
    )

    # Calibrate: the compiled step's growth (in yardstick units, so the machine's drift
    # between runs does not bend the fit) with 10 and 40 products, fitted as a*N + b.
    print("calibrating the planted slowdown ...", file=sys.stderr)
    counts = (10, 40)
    growth = [
        (per_stick(run({"COMPILEGATE_PLANT_PRODUCTS": str(n)})) / per_stick(baseline) - 1) * base_ms
        for n in counts
    ]
    a = max((growth[1] - growth[0]) / (counts[1] - counts[0]), 1e-6)
    fit = (a, growth[0] - a * counts[0])
    for level in [int(x) for x in args.levels.split(",")]:
        count = products_for(base_ms * level / 100, fit)
        print(f"planted {level}% slowdown ({count} products) ...", file=sys.stderr)
        docs = [run({"COMPILEGATE_PLANT_PRODUCTS": str(count)}) for _ in range(args.detect_runs)]
        reports = [compare_to_baseline(baseline, d) for d in docs]
        measured = statistics.median(per_stick(d) / per_stick(baseline) - 1 for d in docs) * 100
        hits = sum(flagged(r, SPEED_METRICS) for r in reports)
        incon = sum(
            any(x.verdict == "inconclusive" and x.metric in SPEED_METRICS for x in r.rows())
            for r in reports
        )
        rows.append(
            (
                f"compiled-only slowdown {level}%",
                args.detect_runs,
                f"{hits}/{args.detect_runs}",
                f"{incon}/{args.detect_runs}",
                "speedup / compiled_step_ms",
                f"{measured:+.0f}%",
            )
        )

    for plant, metric in (
        ("graph_break", "graph_break_sites"),
        ("recompile", "recompiles"),
        ("numerics", "numerics"),
    ):
        print(f"planted {plant} ...", file=sys.stderr)
        reports = [
            compare_to_baseline(baseline, run({"COMPILEGATE_PLANT": plant}))
            for _ in range(args.plant_runs)
        ]
        hits = sum(flagged(r, (metric,)) for r in reports)
        rows.append(
            (
                f"planted {plant.replace('_', ' ')}",
                args.plant_runs,
                f"{hits}/{args.plant_runs}",
                "-",
                metric,
                "-",
            )
        )

    env = baseline["environment"]
    print(
        f"\ngate power · torch {env['torch']} · {env.get('gpu_name') or 'CPU'} · "
        f"{args.iterations} iterations x 10 rounds · threads {args.threads} · "
        f"baseline compiled step {base_ms:.3f} ms · "
        f"noise (A/A) {baseline['steps'][0]['variants'][0]['noise_pct']:.1f}% · "
        f"{time.perf_counter() - started:.0f} s"
    )
    header = ("case", "runs", "flagged regression", "inconclusive", "metric", "measured change")
    table = [header, *rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


if __name__ == "__main__":
    main()
