"""Does the gate cry wolf, and does it catch real regressions? Measured, printed as a table.

1. False alarms: the same config and code, run N times against a baseline from one run of
   that same code. Counts runs with any `regression` verdict (target 0) and runs with any
   `inconclusive` one, naming the metrics.
2. Step-time slowdowns planted on one side only: a busy-wait of a given share of the
   baseline's step time (as the gate measures it: the fastest iterations, geometric mean
   over the baseline's processes), in the eager step only or in the compiled step only
   (examples/test_steps/gate_step.py). M runs each: the fraction flagged `regression`,
   and the change the gate measured (median over the runs), checked to be within
   ±3 points of the planted size (flagged OFF-TARGET otherwise).
3. Planted new graph break, recompile and numerics error: the fraction flagged.

Every run is a real `compilegate run` (child processes, torch.compile with Inductor) sharing
one Inductor cache, since compile time is not what this measures. The load average of the
machine is printed with the table: on a shared runner it is part of the result.

    python bench/gate_power.py [--runs 10] [--detect-runs 5] [--levels 10,25] [--python PATH]
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
from compilegate.results.processes import (  # noqa: E402
    compiled_values,
    eager_records,
    eager_values,
    geometric_mean,
    variant_records,
)

SPEED_METRICS = ("speedup", "compiled_step_ms", "eager_step_ms")
# A step of about a millisecond on one CPU thread (examples/test_steps/gate_step.py).
STEP_SIZE = {"COMPILEGATE_GATE_WIDTH": "512", "COMPILEGATE_GATE_ROWS": "64"}
SIZE_TOLERANCE_POINTS = 3.0
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


def fastest_ms(document: dict, side: str) -> float:
    """The step time the gate compares: fastest iterations, geometric mean over processes."""
    step = document["steps"][0]
    if side == "eager":
        return geometric_mean(eager_values(eager_records(step), per_yardstick=False))
    records = variant_records(step["variants"][0])
    return geometric_mean(compiled_values(records, per_yardstick=False))


def rows_of(report, metric: str) -> list:
    return [r for r in report.rows() if r.metric == metric]


def flagged(report, metrics: tuple[str, ...] | None = None, verdict: str = "regression") -> bool:
    return any(
        r.verdict == verdict and (metrics is None or r.metric in metrics) for r in report.rows()
    )


def size_check(measured: float, planted: float) -> str:
    off = abs(measured - planted) > SIZE_TOLERANCE_POINTS
    return f"{measured:+.1f}%" + (f" OFF-TARGET (want {planted:g}±3)" if off else " (ok)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="A/A runs against the baseline")
    parser.add_argument("--detect-runs", type=int, default=5, help="runs per planted slowdown")
    parser.add_argument("--plant-runs", type=int, default=3, help="runs per planted break kind")
    parser.add_argument("--levels", default="10,25", help="compiled-only slowdowns, percent")
    parser.add_argument("--eager-level", type=float, default=10, help="eager-only slowdown, %%")
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    started = time.perf_counter()
    load_before = os.getloadavg()
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
    rows = []

    print(f"false alarms: {args.runs} runs of unchanged code ...", file=sys.stderr)
    aa_reports = [compare_to_baseline(baseline, run()) for _ in range(args.runs)]
    regressions = sum(flagged(r) for r in aa_reports)
    inconclusive = sum(flagged(r, verdict="inconclusive") for r in aa_reports)
    hits = sorted({x.metric for r in aa_reports for x in r.rows() if x.verdict == "regression"})
    shrugs = sorted({x.metric for r in aa_reports for x in r.rows() if x.verdict == "inconclusive"})
    detail = f"regression: {', '.join(hits) or '-'}; inconclusive: {', '.join(shrugs) or '-'}"
    aa_noise = {
        metric: statistics.median(
            row.noise_pct for r in aa_reports for row in rows_of(r, metric) if row.noise_pct
        )
        for metric in SPEED_METRICS
    }
    rows.append(
        (
            "unchanged code (A/A)",
            args.runs,
            f"{regressions}/{args.runs}",
            f"{inconclusive}/{args.runs}",
            detail,
            "-",
        )
    )

    plants = [("eager", args.eager_level)] + [
        ("compiled", float(x)) for x in args.levels.split(",")
    ]
    for side, level in plants:
        wait_ms = fastest_ms(baseline, side) * level / 100
        metric = f"{side}_step_ms"
        judged_by = (metric,) if side == "eager" else ("speedup", metric)
        print(f"planted {side}-only {level:g}% slowdown ({wait_ms:.3f} ms) ...", file=sys.stderr)
        variable = (
            "COMPILEGATE_PLANT_EAGER_MS" if side == "eager" else "COMPILEGATE_PLANT_COMPILED_MS"
        )
        reports = [
            compare_to_baseline(baseline, run({variable: f"{wait_ms:.6f}"}))
            for _ in range(args.detect_runs)
        ]
        measured = statistics.median(rows_of(r, metric)[0].change for r in reports)
        rows.append(
            (
                f"{side}-only slowdown {level:g}%",
                args.detect_runs,
                f"{sum(flagged(r, judged_by) for r in reports)}/{args.detect_runs}",
                f"{sum(flagged(r, judged_by, 'inconclusive') for r in reports)}/{args.detect_runs}",
                " or ".join(judged_by),
                size_check(measured, level),
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
    step = baseline["steps"][0]
    load_after = os.getloadavg()
    print(
        f"\ngate power · torch {env['torch']} · {env.get('gpu_name') or 'CPU'} "
        f"({env.get('cpu_count')} cores) · {args.iterations} iterations x 10 rounds · "
        f"threads {args.threads} · processes: eager {len(eager_records(step))}, "
        f"variant {len(variant_records(step['variants'][0]))} · baseline fastest eager "
        f"{fastest_ms(baseline, 'eager'):.3f} ms, "
        f"compiled {fastest_ms(baseline, 'compiled'):.3f} ms"
        f" · median A/A noise: "
        + ", ".join(f"{m} ±{n:.1f}%" for m, n in aa_noise.items())
        + f" · load average {load_before[0]:.1f} → {load_after[0]:.1f} · "
        f"{time.perf_counter() - started:.0f} s"
    )
    header = ("case", "runs", "flagged regression", "inconclusive", "metric", "measured change")
    table = [header, *rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


if __name__ == "__main__":
    main()
