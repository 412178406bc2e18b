"""Does the gate cry wolf when the machine is busy, and does it still catch real regressions?
Measured with real `compilegate run`s, printed as a table.

The baseline is recorded with no extra load; every pull-request-side run is measured while
`--load N` busy-loop processes spin (the machine's other jobs come on top: the load average
is printed with the table). Each run compiles cold (a fresh Inductor cache per variant, as
`compilegate run` does by default), so compile cost is judged as in CI.

    case                        planted (examples/test_steps/gate_step.py)    flagged when
    unchanged code (A/A)        nothing                                       any regression
    eager-only slowdown         eager steps busy-wait 10 % of the baseline's  eager_step_ms
                                fastest eager iteration
    compiled-only slowdown      the same, compiled steps only                 speedup or
                                                                              compiled_step_ms
    compile-only plant          300 element-wise ops traced only while        compile_work or
                                compiling (COMPILEGATE_PLANT=compile_only)    compile_cpu_s
    most iterations slower      9 loss calls in 10 wait 50 % of the fastest   eager_step_ms_p25 or
                                eager iteration more (the fastest untouched)  compiled_step_ms_p25
    more work (4 plants)        a redundant matmul, an .item() per step, an   step_work
                                extra .clone() of activations, an extra
                                optimizer pass (COMPILEGATE_PLANT=matmul, ...)

For the unchanged code the table counts runs with any `regression` row (target 0, compile
cost included) and with any `inconclusive` row, naming the metrics; for each plant, the runs
that flagged it as a regression (target ≥ 4/5) and the change the gate measured (median).

Iterations: 600 a side in each process (10 rounds of 60). On a 2-core VM whose host's speed
wanders from second to second, the fastest of 60 iterations scattered ±10–15 % from process
to process (idle as much as under load) and a 5-run history's interval was ±20 %; the
fastest of 600, ±5 % for eager and ±8–10 % for the compiled step.

    python bench/gate_power.py [--load 2] [--runs 10] [--detect-runs 5] [--iterations 600]
    python bench/gate_power.py --load 2 --runs 1 --detect-runs 1 --iterations 20   # smoke
    python bench/gate_power.py --judge-only DIR   # the table again, from the kept results
    python bench/gate_power.py --load 2 --load-period 20 --baseline-runs 5 --plants eager,compiled
        # a shared runner: busy loops that come and go on both sides, the stored baseline
        # made of 5 default-branch runs (its history: gate/history.py)
    python bench/gate_power.py --paired [--load 2]  # paired mode vs stored (paired_power.py)
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

from bench_common import (  # noqa: E402
    change_of,
    fastest_ms,
    first_step,
    flagged,
    intermittent_busy_loops,
    new_manifest,
)

from compilegate.gate.baseline import merge_into_baseline  # noqa: E402
from compilegate.gate.compare import compare_to_baseline  # noqa: E402
from compilegate.results.model import parse  # noqa: E402
from compilegate.results.processes import (  # noqa: E402
    step_processes,
    variant_processes,
)

# A step of about a millisecond on one CPU thread (examples/test_steps/gate_step.py).
STEP_SIZE = {"COMPILEGATE_GATE_WIDTH": "512", "COMPILEGATE_GATE_ROWS": "64"}
SIZE_TOLERANCE_POINTS = 3.0
PLANT_VARIABLES = (
    "COMPILEGATE_PLANT",
    "COMPILEGATE_PLANT_EAGER_MS",
    "COMPILEGATE_PLANT_COMPILED_MS",
    "COMPILEGATE_PLANT_MOST_MS",
    "COMPILEGATE_GATE_WIDTH",
    "COMPILEGATE_GATE_ROWS",
)
# Plants that make the step do more work (examples/test_steps/gate_step.py): judged by the
# step-work counts (gate/judges/step_work.py), from one stored run whatever the load.
WORK_PLANTS = {
    "matmul": "a redundant matmul (~10 % of FLOPs)",
    "item": "an .item() per step",
    "clone": "an extra .clone() of activations",
    "optimizer": "an extra optimizer pass",
}
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
    variant_processes: {processes}
    numerics: {{enabled: false}}
    env: [{env}]
"""


def judge_pair(baseline: dict, result: dict):
    """The gate's verdicts on two JSON documents, each read through the door first."""
    return compare_to_baseline(
        parse(baseline, "baseline", "baseline"), parse(result, "result", "result")
    )


def run_once(
    config: Path, out: Path, python: str, plant: dict[str, str], load: int, period_s: float = 0.0
) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **STEP_SIZE, **plant}
    for name in PLANT_VARIABLES:
        if name not in plant and name not in STEP_SIZE:
            env.pop(name, None)
    command = [
        *(sys.executable, "-m", "compilegate", "run"),
        *("--config", str(config), "--repo", str(REPO_ROOT)),
        *("--out", str(out), "--python", python),
    ]
    with intermittent_busy_loops(load, period_s):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if not out.is_file():
        raise SystemExit(f"gate_power: run failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.read_text())


def size_check(reports: list, metric: str, planted: float) -> str:
    changes = [row.change for r in reports for row in r.rows(metric=metric)]
    if not changes:
        return "-"
    measured = statistics.median(changes)
    off = abs(measured - planted) > SIZE_TOLERANCE_POINTS
    return f"{metric} {measured:+.1f}%" + (f" OFF-TARGET (want {planted:g}±3)" if off else "")


def work_changes(reports: list) -> str:
    """Each subject's step-work change in the first report (the counts repeat run to run):
    `eager +1; default +1` (a host sync, a count) or `eager +2.3%`."""
    rows = reports[0].rows(metric="step_work") if reports else []
    said = [
        f"{row.variant} {row.change:+.0f}"
        if row.change_unit == "count"
        else f"{row.variant} {row.change:+.1f}%"
        for row in rows
        if row.change is not None and row.verdict != "pass"
    ]
    return "; ".join(said) or "-"


def plants(args: argparse.Namespace, baseline: dict) -> list[dict]:
    """The planted cases: label, environment, the metrics that flag it, how to size it."""
    eager_ms, compiled_ms = fastest_ms(baseline, "eager"), fastest_ms(baseline, "compiled")
    return [
        {
            "key": "eager",
            "label": f"eager-only slowdown {args.level:g}%",
            "plant": {"COMPILEGATE_PLANT_EAGER_MS": f"{eager_ms * args.level / 100:.6f}"},
            "judged_by": ["eager_step_ms"],
            "size": ["eager_step_ms", args.level],
        },
        {
            "key": "compiled",
            "label": f"compiled-only slowdown {args.level:g}%",
            "plant": {"COMPILEGATE_PLANT_COMPILED_MS": f"{compiled_ms * args.level / 100:.6f}"},
            "judged_by": ["speedup", "compiled_step_ms"],
            "size": ["compiled_step_ms", args.level],
        },
        {
            "key": "compile",
            "label": "compile-only plant (300 ops)",
            "plant": {"COMPILEGATE_PLANT": "compile_only"},
            "judged_by": ["compile_work", "compile_cpu_s"],
            "shown": ["compile_work", "compile_cpu_s", "compile_s"],
        },
        *(
            {
                "key": key,
                "label": label,
                "plant": {"COMPILEGATE_PLANT": key},
                "judged_by": ["step_work"],
                "shown": ["step_work"],
            }
            for key, label in WORK_PLANTS.items()
        ),
        {
            "key": "most",
            "label": f"9 in 10 iterations +{args.most_level:g}%",
            "plant": {"COMPILEGATE_PLANT_MOST_MS": f"{eager_ms * args.most_level / 100:.6f}"},
            "judged_by": ["eager_step_ms_p25", "compiled_step_ms_p25"],
            "shown": ["eager_step_ms_p25", "eager_step_ms"],
        },
    ]


def measure(args: argparse.Namespace, work: Path) -> None:
    """Every run, each result kept in `work` and listed in work/manifest.json as it lands."""
    config = work / "compilegate.yml"
    config.write_text(
        CONFIG.format(
            device=args.device,
            iterations=args.iterations,
            threads=args.threads,
            processes=args.processes,
            env=", ".join(PLANT_VARIABLES),
        )
    )
    manifest = new_manifest(args)
    counter = iter(range(10_000))

    def run(plant: dict[str, str] | None = None, load: int = args.load) -> str:
        out = work / f"r{next(counter)}.json"
        run_once(config, out, args.python, plant or {}, load, args.load_period)
        return out.name

    def save() -> None:
        manifest["load_after"] = os.getloadavg()[0]
        manifest["seconds"] = time.time() - manifest["started"]
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1))

    log = sys.stderr
    baseline_load = args.load if args.baseline_runs > 1 else 0
    print(
        f"baseline: {args.baseline_runs} run(s) under load {baseline_load} in {work} ...", file=log
    )
    manifest["baseline_runs"] = []
    for _ in range(args.baseline_runs):
        manifest["baseline_runs"].append(run(load=baseline_load))
        save()
    manifest["baseline"] = manifest["baseline_runs"][-1]
    baseline = json.loads((work / manifest["baseline"]).read_text())
    cases = [{"label": "unchanged code (A/A)", "plant": {}, "aa": True, "runs": args.runs}]
    cases += [dict(case, runs=args.detect_runs) for case in plants(args, baseline)]
    cases = [c for c in cases if c.get("aa") or c["key"] in args.plants.split(",")]
    for case in cases:
        case = dict(case, files=[])
        manifest["cases"].append(case)
        print(f"{case['label']}: {case['runs']} runs under load {args.load} ...", file=log)
        for _ in range(case["runs"]):
            case["files"].append(run(case["plant"]))
            save()


def stored_baseline(work: Path, names: list[str]) -> dict:
    """The baseline `compilegate baseline update` makes of these default-branch runs, in
    order: the last run's measurements, the history of all of them (gate/history.py)."""
    baseline = None
    for name in names:
        run = parse(json.loads((work / name).read_text()), str(work / name))
        baseline, _ = merge_into_baseline(baseline, run, work)
    assert baseline is not None
    return baseline.to_json()


def period_text(manifest: dict) -> str:
    period = manifest.get("load_period_s")
    return f", coming and going every {period:g} s" if period else ""


def judge(work: Path) -> None:
    """The table, from the results listed in work/manifest.json, with the gate as it is now."""
    manifest = json.loads((work / "manifest.json").read_text())
    baseline = stored_baseline(work, manifest.get("baseline_runs") or [manifest["baseline"]])
    rows = []
    for case in manifest["cases"]:
        reports = [
            judge_pair(baseline, json.loads((work / name).read_text())) for name in case["files"]
        ]
        n = len(reports)
        if case.get("aa"):
            latest = json.loads((work / manifest["baseline"]).read_text())
            against_one = [
                judge_pair(latest, json.loads((work / name).read_text())) for name in case["files"]
            ]
            one_hits = sorted({x.metric for r in against_one for x in r.rows(verdict="regression")})
            print(
                f"unchanged code against the latest baseline run alone (no history): "
                f"{sum(flagged(r) for r in against_one)}/{n} with a regression row "
                f"({', '.join(one_hits) or '-'}), "
                f"{sum(flagged(r, verdict='inconclusive') for r in against_one)}/{n} inconclusive",
                file=sys.stderr,
            )
            hits = sorted({x.metric for r in reports for x in r.rows(verdict="regression")})
            shrugs = sorted({x.metric for r in reports for x in r.rows(verdict="inconclusive")})
            rows.append(
                (
                    case["label"],
                    n,
                    f"{sum(flagged(r) for r in reports)}/{n}",
                    f"{sum(flagged(r, verdict='inconclusive') for r in reports)}/{n}",
                    f"regression: {', '.join(hits) or '-'}; "
                    f"inconclusive: {', '.join(shrugs) or '-'}",
                    "; ".join(
                        change_of(reports, (m,))
                        for m in ("compile_cpu_s", "compile_s", "eager_step_ms_p25")
                    ),
                )
            )
            continue
        judged_by = tuple(case["judged_by"])
        if "size" in case:
            measured = size_check(reports, *case["size"])
        elif case["judged_by"] == ["step_work"]:
            measured = work_changes(reports)
        else:
            measured = "; ".join(change_of(reports, (m,)) for m in case["shown"])
        rows.append(
            (
                case["label"],
                n,
                f"{sum(flagged(r, judged_by) for r in reports)}/{n}",
                f"{sum(flagged(r, judged_by, 'inconclusive') for r in reports)}/{n}",
                " or ".join(judged_by),
                measured,
            )
        )
    env = baseline["environment"]
    step = baseline["steps"][0]
    cost = step["variants"][0].get("compile_cost") or {}
    print(
        f"gate power · `{manifest['command']}` · --load {manifest['load']} on the PR side "
        f"{period_text(manifest)} "
        f"(baseline: {len(manifest.get('baseline_runs') or [1])} run(s), "
        f"{'under the same load' if len(manifest.get('baseline_runs') or []) > 1 else 'without'})"
        f" · torch {env['torch']} · {env.get('gpu_name') or 'CPU'} "
        f"({env.get('cpu_count')} cores) · {manifest['iterations']} iterations x 10 rounds · "
        f"threads {manifest['threads']} · processes: eager "
        f"{len(step_processes(first_step(baseline)))}, variant "
        f"{len(variant_processes(first_step(baseline).variants[0]))} · baseline fastest eager "
        f"{fastest_ms(baseline, 'eager'):.3f} ms, compiled {fastest_ms(baseline, 'compiled'):.3f} "
        f"ms, compile {step['variants'][0].get('compile_s') or 0:.1f} s wall / "
        f"{cost.get('cpu_s') or 0:.1f} s CPU · load average {manifest['load_before']:.1f} → "
        f"{manifest.get('load_after', 0):.1f} · {manifest.get('seconds', 0):.0f} s"
    )
    header = ("case", "runs", "flagged regression", "inconclusive", "metric", "measured")
    table = [header, *rows]
    widths = [max(len(str(r[i])) for r in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=2, help="busy loops on the PR side")
    parser.add_argument("--runs", type=int, default=10, help="A/A runs against the baseline")
    parser.add_argument("--detect-runs", type=int, default=5, help="runs per plant")
    parser.add_argument("--level", type=float, default=10, help="eager/compiled slowdown, %%")
    parser.add_argument("--most-level", type=float, default=50, help="most-iterations plant, %%")
    parser.add_argument("--iterations", type=int, default=600, help="a side, per process")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--processes",
        type=int,
        default=4,
        metavar="N",
        help="variant_processes of the step (the default config's 4); the eager row also "
        "has the one eager reference",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--work", type=Path, default=None, help="folder for the results")
    parser.add_argument(
        "--load-period",
        type=float,
        default=0.0,
        metavar="S",
        help="the busy loops come and go, on for S seconds, off for S",
    )
    parser.add_argument(
        "--baseline-runs",
        type=int,
        default=1,
        metavar="N",
        help="default-branch runs merged into the stored baseline (its history); with more "
        "than one they run under the same load as the pull-request side",
    )
    parser.add_argument(
        "--plants",
        default="eager,compiled,compile,most",
        help="the planted cases to run, of eager,compiled,compile,most," + ",".join(WORK_PLANTS),
    )
    parser.add_argument(
        "--paired",
        action="store_true",
        help="paired mode (run --against) vs a stored baseline on the same runs "
        "(bench/paired_power.py)",
    )
    parser.add_argument(
        "--pairing-compare",
        action="store_true",
        help="with --paired: base and head in one process vs in alternating processes, "
        "A/A and a compiled-only plant (bench/paired_power.py)",
    )
    parser.add_argument(
        "--cases",
        default="aa,compiled",
        help="with --pairing-compare: the cases to run, of aa,compiled (the plant's size "
        "comes from this run's first A/A base unless --plant-ms gives it)",
    )
    parser.add_argument(
        "--backend",
        default="inductor",
        help="with --paired: the variant's torch.compile backend (eager: Dynamo only, a "
        "compile of seconds, for timing questions on a loaded machine)",
    )
    parser.add_argument(
        "--plant-ms", type=float, default=None, help="with --pairing-compare: the plant, ms"
    )
    parser.add_argument(
        "--also",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="with --judge-only and --pairing-compare: more bench folders judged together",
    )
    parser.add_argument(
        "--judge-only",
        type=Path,
        default=None,
        metavar="DIR",
        help="re-judge the results an earlier run kept in DIR (its manifest.json)",
    )
    args = parser.parse_args()
    if args.paired:
        import paired_power

        work = args.work or Path(tempfile.mkdtemp(prefix="gate-power-paired-"))
        work.mkdir(parents=True, exist_ok=True)
        paired_power.main(args, work)
        return
    if args.judge_only is not None:
        judge(args.judge_only)
        return
    work = args.work or Path(tempfile.mkdtemp(prefix="gate-power-"))
    work.mkdir(parents=True, exist_ok=True)
    measure(args, work)
    print(file=sys.stderr)
    judge(work)


if __name__ == "__main__":
    main()
