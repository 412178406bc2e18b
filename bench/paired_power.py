"""`bench/gate_power.py --paired`: the pull-request question answered both ways on the same
runs, with the CPU oversubscribed for the whole of every run.

A temporary git repository holds the gate step (examples/test_steps/gate_step.py, at the
size gate_power.py uses) and its config: the base commit, and one head commit per case,
each a code change (never an environment variable). Every run is `compilegate run
--against BASE` under `--load N` busy loops. Its head result is judged twice:

    paired    against the base measured in the same run (result.base.json): paired
              differences, A B B A, one machine
    stored    against a baseline recorded once before, at the base commit, with no extra
              load (the stored-baseline mode, as a default branch's baseline workflow would
              have recorded it)

    case                     the head commit                                flagged when
    unchanged code (A/A)     the base's tree (an empty commit)              any regression
    compiled-only slowdown   compiled steps busy-wait 10 % of the stored    speedup or
                             baseline's fastest compiled iteration          compiled_step_ms
    compile-only plant       300 element-wise ops traced only while         compile_work or
                             compiling                                      compile_cpu_s

The table gives, per case and mode, the runs flagged as a regression and the inconclusive
ones; then the noise (the 95 % half-width the gate judged with) of each speed row, median
over the runs, paired vs stored and their ratio; and the time: a paired run as a whole, and
the head's half of it, which is what a stored-baseline run measures.

With `--pairing-compare` the question is the pairing itself: the same paired runs with
base and head in alternating processes (`--pairing processes`) and in one process
(`--pairing in-process`), the modes taking turns run by run, A/A and a compiled-only
slowdown; the table gives the noise (95 % half-width) of each speed row on the A/A runs and
the plant's detection, side by side:

    python bench/gate_power.py --paired --pairing-compare --load 2 --load-period 5 \
        --runs 2 --detect-runs 1 --iterations 200 --processes 3
    python bench/gate_power.py --paired --pairing-compare --judge-only DIR --also DIR2 ...
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from bench_common import (  # noqa: E402
    change_of,
    fastest_ms,
    flagged,
    intermittent_busy_loops,
    new_manifest,
)

from compilegate.gate.compare import compare_to_baseline  # noqa: E402
from compilegate.results.model import parse  # noqa: E402

STEP_SOURCE = REPO_ROOT / "examples" / "test_steps" / "gate_step.py"
WIDTH, ROWS = 512, 64  # gate_power.STEP_SIZE, as code
CONFIG = """\
version: 1
steps:
  - name: gate
    entry: step.py:make_step
    device: {device}
    variants: [{{mode: default, backend: {backend}}}]
    warmup: 3
    iterations: {iterations}
    rounds: 10
    threads: {threads}
    variant_processes: {processes}
    numerics: {{enabled: false}}
"""
SPEED_ROWS = ("eager_step_ms", "compiled_step_ms", "speedup")
GIT = [
    "git",
    "-c",
    "user.name=bench",
    "-c",
    "user.email=bench@localhost",
    "-c",
    "core.hooksPath=/dev/null",
]


def judge_pair(baseline: dict, result: dict):
    """The gate's verdicts on two JSON documents, each read through the door first."""
    return compare_to_baseline(
        parse(baseline, "baseline", "baseline"), parse(result, "result", "result")
    )


def step_source(compiled_ms: float = 0.0, plant: str = "") -> str:
    """The gate step with its size, and a plant, written into the code."""
    text = STEP_SOURCE.read_text()
    replacements = {
        'WIDTH = int(os.environ.get("COMPILEGATE_GATE_WIDTH", "128"))': f"WIDTH = {WIDTH}",
        'ROWS = int(os.environ.get("COMPILEGATE_GATE_ROWS", "16"))': f"ROWS = {ROWS}",
        'PLANT = os.environ.get("COMPILEGATE_PLANT", "")': f"PLANT = {plant!r}",
        'PLANT_COMPILED_MS = float(os.environ.get("COMPILEGATE_PLANT_COMPILED_MS", "0"))': (
            f"PLANT_COMPILED_MS = {compiled_ms!r}"
        ),
    }
    for old, new in replacements.items():
        if old not in text:
            raise SystemExit(f"paired_power: {STEP_SOURCE} changed: {old!r} not found")
        text = text.replace(old, new)
    return text


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [*GIT, "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(repo: Path, source: str, message: str) -> str:
    (repo / "step.py").write_text(source)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def compilegate(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")}
    for name in [n for n in env if n.startswith("COMPILEGATE_")]:
        env.pop(name)
    command = [sys.executable, "-m", "compilegate", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def measure(args: argparse.Namespace, work: Path) -> None:
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    config = CONFIG.format(
        device=args.device,
        iterations=args.iterations,
        threads=args.threads,
        processes=args.processes,
        backend=getattr(args, "backend", "inductor"),
    )
    (repo / "compilegate.yml").write_text(config)
    (repo / ".gitignore").write_text("__pycache__/\n")
    base = commit(repo, step_source(), "base")
    manifest = new_manifest(args)
    manifest["load_period_s"] = args.load_period

    def save() -> None:
        manifest["load_after"] = os.getloadavg()[0]
        manifest["seconds"] = time.time() - manifest["started"]
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1))

    log = sys.stderr
    print(f"stored baseline at the base commit, no extra load, in {work} ...", file=log)
    stored = work / "stored-baseline.json"
    started = time.perf_counter()
    done = compilegate(
        "run",
        "--config",
        str(repo / "compilegate.yml"),
        "--out",
        str(stored),
        "--python",
        args.python,
    )
    if not stored.is_file():
        raise SystemExit(f"paired_power: baseline run failed: {done.stderr.strip()[-500:]}")
    manifest["stored_baseline"] = {"file": stored.name, "seconds": time.perf_counter() - started}
    save()
    baseline = json.loads(stored.read_text())
    compiled_ms = fastest_ms(baseline, "compiled")
    cases = [
        ("unchanged code (A/A)", step_source(), args.runs, None),
        (
            f"compiled-only slowdown {args.level:g}%",
            step_source(compiled_ms=round(compiled_ms * args.level / 100, 6)),
            args.detect_runs,
            ["speedup", "compiled_step_ms"],
        ),
        (
            "compile-only plant (300 ops)",
            step_source(plant="compile_only"),
            args.detect_runs,
            ["compile_work", "compile_cpu_s"],
        ),
    ]
    counter = 0
    for label, source, runs, judged_by in cases:
        git(repo, "checkout", "-q", "--detach", base)
        head = commit(repo, source, label)
        case = {"label": label, "judged_by": judged_by, "head": head, "runs": []}
        manifest["cases"].append(case)
        print(f"{label}: {runs} paired runs under load {args.load} ...", file=log)
        for _ in range(runs):
            counter += 1
            out = work / f"p{counter}.json"
            started = time.perf_counter()
            with intermittent_busy_loops(args.load, args.load_period):
                done = compilegate(
                    "run",
                    "--config",
                    str(repo / "compilegate.yml"),
                    "--against",
                    base,
                    "--out",
                    str(out),
                    "--python",
                    args.python,
                )
            seconds = time.perf_counter() - started
            if not out.is_file():
                raise SystemExit(f"paired_power: run failed: {done.stderr.strip()[-500:]}")
            case["runs"].append(
                {
                    "head": out.name,
                    "base": out.with_name(f"p{counter}.base.json").name,
                    "seconds": seconds,
                    "exit": done.returncode,
                }
            )
            save()


def judge(work: Path) -> None:
    manifest = json.loads((work / "manifest.json").read_text())
    stored = json.loads((work / manifest["stored_baseline"]["file"]).read_text())
    rows = []
    noise: dict[str, dict[str, list[float]]] = {m: {"paired": [], "stored": []} for m in SPEED_ROWS}
    seconds = []
    for case in manifest["cases"]:
        reports = {"paired": [], "stored": []}
        for run in case["runs"]:
            head = json.loads((work / run["head"]).read_text())
            base = json.loads((work / run["base"]).read_text())
            reports["paired"].append(judge_pair(base, head))
            reports["stored"].append(judge_pair(stored, head))
            seconds.append(run["seconds"])
        metrics = tuple(case["judged_by"]) if case["judged_by"] else None
        for mode in ("paired", "stored"):
            got = reports[mode]
            n = len(got)
            hit = sum(flagged(r, metrics) for r in got)
            shrug = sum(flagged(r, metrics, "inconclusive") for r in got)
            named = sorted(
                {
                    x.metric
                    for r in got
                    for x in r.rows(verdict="regression")
                    if metrics is None or x.metric in metrics
                }
            )
            shown = change_of(got, metrics or ("compiled_step_ms", "speedup"))
            rows.append(
                (
                    case["label"],
                    mode,
                    n,
                    f"{hit}/{n}",
                    f"{shrug}/{n}",
                    ", ".join(named) or "-",
                    shown,
                )
            )
            for metric in SPEED_ROWS:
                noise[metric][mode] += [
                    row.noise_pct
                    for r in got
                    for row in r.rows(metric=metric)
                    if row.noise_pct is not None
                ]
    env = stored["environment"]
    print(
        f"gate power, paired vs stored · `{manifest['command']}` · --load {manifest['load']} "
        f"busy loops {_pattern(manifest)} (stored baseline recorded without) · torch "
        f"{env['torch']} "
        f"· {env.get('gpu_name') or 'CPU'} ({env.get('cpu_count')} cores) · "
        f"{manifest['iterations']} iterations x 10 rounds · threads {manifest['threads']} · "
        "load average "
        f"{manifest['load_before']:.1f} → {manifest.get('load_after', 0):.1f} · "
        f"{manifest.get('seconds', 0):.0f} s"
    )
    table(
        ("case", "mode", "runs", "regression", "inconclusive", "flagged by", "change (median)"),
        rows,
    )
    print()
    noise_rows = []
    for metric in SPEED_ROWS:
        p, s = noise[metric]["paired"], noise[metric]["stored"]
        if p and s:
            mp, ms = statistics.median(p), statistics.median(s)
            noise_rows.append((metric, f"±{mp:.1f} %", f"±{ms:.1f} %", f"{mp / ms:.2f}"))
    table(("row", "noise paired (median)", "noise stored (median)", "paired / stored"), noise_rows)
    print()
    base_s = manifest["stored_baseline"]["seconds"]
    print(
        f"time: a paired run {statistics.median(seconds):.0f} s (median of {len(seconds)}, "
        f"{min(seconds):.0f}–{max(seconds):.0f}); a stored-baseline run measures the head's half "
        f"of it (about {statistics.median(seconds) / 2:.0f} s under the same load; the stored "
        f"baseline itself took {base_s:.0f} s idle)"
    )


def _pattern(manifest: dict) -> str:
    period = manifest.get("load_period_s")
    if period:
        return f"on {period:g} s, off {period:g} s, through every paired run"
    return "through every paired run"


def table(header: tuple[str, ...], rows: list[tuple]) -> None:
    every = [header, *rows]
    widths = [max(len(str(r[i])) for r in every) for i in range(len(header))]
    for row in every:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


PAIRINGS = ("processes", "in-process")


def measure_pairings(args: argparse.Namespace, work: Path) -> None:
    """`--pairing-compare`: the same paired runs in both pairing modes, the modes taking
    turns run by run (so that the load falls on both alike): `args.runs` A/A runs and
    `args.detect_runs` runs of a compiled-only slowdown of `args.level` % per mode. The
    plant's size comes from the first A/A run's base (its fastest compiled iteration)."""
    repo = work / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    config = CONFIG.format(
        device=args.device,
        iterations=args.iterations,
        threads=args.threads,
        processes=args.processes,
        backend=getattr(args, "backend", "inductor"),
    )
    (repo / "compilegate.yml").write_text(config)
    (repo / ".gitignore").write_text("__pycache__/\n")
    base = commit(repo, step_source(), "base")
    manifest = new_manifest(args)
    manifest["pairing_compare"] = True
    log = sys.stderr

    def save() -> None:
        manifest["load_after"] = os.getloadavg()[0]
        manifest["seconds"] = time.time() - manifest["started"]
        (work / "manifest.json").write_text(json.dumps(manifest, indent=1))

    counter = 0

    def paired_run(case: dict, pairing: str) -> dict:
        nonlocal counter
        counter += 1
        out = work / f"p{counter}.json"
        started = time.perf_counter()
        with intermittent_busy_loops(args.load, args.load_period):
            done = compilegate(
                "run",
                *("--config", str(repo / "compilegate.yml"), "--against", base),
                *("--pairing", pairing, "--out", str(out), "--python", args.python),
            )
        if not out.is_file():
            raise SystemExit(f"paired_power: run failed: {done.stderr.strip()[-500:]}")
        run = {
            "pairing": pairing,
            "head": out.name,
            "base": out.with_name(f"p{counter}.base.json").name,
            "seconds": time.perf_counter() - started,
            "exit": done.returncode,
        }
        case["runs"].append(run)
        save()
        print(
            f"  {case['label']} · {pairing}: {run['seconds']:.0f} s, exit {done.returncode}",
            file=log,
        )
        return run

    wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
    plant_ms = args.plant_ms
    for name in wanted:
        if name == "aa":
            label, source, runs, judged_by = "unchanged code (A/A)", step_source(), args.runs, None
        else:
            if plant_ms is None:
                first = next(c for c in manifest["cases"] if c["judged_by"] is None)
                base_doc = json.loads((work / first["runs"][0]["base"]).read_text())
                plant_ms = fastest_ms(base_doc, "compiled") * args.level / 100
            label = f"compiled-only slowdown {args.level:g}%"
            source = step_source(compiled_ms=round(plant_ms, 6))
            runs, judged_by = args.detect_runs, ["speedup", "compiled_step_ms"]
        git(repo, "checkout", "-q", "--detach", base)
        head = commit(repo, source, label)
        case = {"label": label, "judged_by": judged_by, "head": head, "runs": []}
        manifest["cases"].append(case)
        print(f"{label}: {runs} paired runs per pairing mode, modes taking turns ...", file=log)
        for index in range(runs):
            order = PAIRINGS if index % 2 == 0 else tuple(reversed(PAIRINGS))
            for pairing in order:
                paired_run(case, pairing)


def judge_pairings(folders: list[Path]) -> None:
    """The A/A noise (the 95 % half-width the gate judged with, median over runs) and the
    plant's detection, per pairing mode, side by side; over every folder's runs."""
    by_case: dict[str, dict[str, list]] = {}
    judged_by: dict[str, tuple[str, ...] | None] = {}
    seconds: dict[str, list[float]] = {m: [] for m in PAIRINGS}
    manifests = []
    for work in folders:
        manifest = json.loads((work / "manifest.json").read_text())
        manifests.append(manifest)
        for case in manifest["cases"]:
            judged_by[case["label"]] = tuple(case["judged_by"]) if case["judged_by"] else None
            for run in case["runs"]:
                head = json.loads((work / run["head"]).read_text())
                base = json.loads((work / run["base"]).read_text())
                mode = (head.get("pairing") or {}).get("mode", "processes")
                report = compare_to_baseline(
                    parse(base, "base", "baseline"), parse(head, "head", "result")
                )
                by_case.setdefault(case["label"], {m: [] for m in PAIRINGS})[mode].append(report)
                seconds[mode].append(run["seconds"])
    first = manifests[0]
    print(
        f"paired mode, in-process vs alternating processes · --load {first['load']} busy loops "
        f"{_pattern(first)} · {first['iterations']} iterations x 10 rounds · "
        f"variant_processes {first.get('variant_processes')} · threads {first['threads']} · "
        f"{len(folders)} bench run(s), "
        f"{sum(m.get('seconds', 0) for m in manifests):.0f} s"
    )
    rows = []
    for label, modes in by_case.items():
        metrics = judged_by[label]
        for mode in PAIRINGS:
            got = modes[mode]
            if not got:
                continue
            n = len(got)
            hit = sum(flagged(r, metrics) for r in got)
            shrug = sum(flagged(r, metrics, "inconclusive") for r in got)
            noise = []
            for metric in SPEED_ROWS:
                values = [
                    row.noise_pct
                    for r in got
                    for row in r.rows(metric=metric)
                    if row.noise_pct is not None
                ]
                noise.append(f"±{statistics.median(values):.1f} %" if values else "-")
            shown = change_of(got, metrics or ("compiled_step_ms", "speedup"))
            rows.append((label, mode, n, f"{hit}/{n}", f"{shrug}/{n}", *noise, shown))
    table(
        (
            "case",
            "pairing",
            "runs",
            "regression",
            "inconclusive",
            "eager noise",
            "compiled noise",
            "speedup noise",
            "change (median)",
        ),
        rows,
    )
    for mode in PAIRINGS:
        if seconds[mode]:
            print(
                f"time, {mode}: a paired run {statistics.median(seconds[mode]):.0f} s "
                f"(median of {len(seconds[mode])})"
            )


def main(args: argparse.Namespace, work: Path) -> None:
    if getattr(args, "pairing_compare", False):
        if args.judge_only is None:
            measure_pairings(args, work)
            print(file=sys.stderr)
            judge_pairings([work])
        else:
            judge_pairings([args.judge_only, *getattr(args, "also", [])])
        return
    if args.judge_only is None:
        measure(args, work)
        print(file=sys.stderr)
    judge(args.judge_only or work)
