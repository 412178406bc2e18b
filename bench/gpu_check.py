"""`make gpu-check`: does the gate hold on the GPU it is built for? One command that fits a
lent window (issue 28), writing what it measured after every run.

    1  the example, twice   the launch-bound transformer (examples/transformer_step.py:
                            make_step_gpu_small, reduce-overhead) run twice; each run recorded
                            as a one-run baseline (`baseline update`, no --force) and the
                            other judged against it (`compare`): the A/A in both orders
    2  paired A/A           the gate step (examples/test_steps/gate_step.py) in a scratch
                            repository: `run --against BASE` with an unchanged head
    3  10 % eager plant     a head whose eager iterations busy-wait 10 % of the base's fastest
                            eager iteration (on a launch-bound step the GPU waits for it too)
    4  10 % compiled plant  the same on the compiled iterations only
    5  work plant           a head whose loss does one redundant matmul (gate_step.py's
                            `matmul` plant: more work, not more waiting), paired: the
                            step-work counts must catch it from that one run

and, for the example's two runs, the step-work counts of eager and the variant (identical
in both runs?), the step_work row of each order's judgement, and what bounds each side
(results/step_bound.py: launch- or GPU-bound, from the kernels and the GPU's busy time);

which yardstick the example's step times followed across its processes (the GPU-bound or
the launch-bound one: results/yardsticks.py), and the GPU's state before and after (NVML:
SM and memory clocks, throttle reasons, persistence mode, power limit, driver, other
processes). Every run's documents, the judgements and the table go to --out (default
out/gpu-check/) as they come, so a run cut off by its window keeps what it measured. On a
machine without CUDA, `--device cpu` runs the same sequence on the CPU's sizes (the
rehearsal before a lent window).

    python bench/gpu_check.py [--out DIR] [--device cuda|cpu] [--budget-s 480]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from bench_common import fastest_ms, first_step  # noqa: E402
from paired_power import commit, git  # noqa: E402  (the scratch repository's git)

from compilegate.gate.compare import compare_to_baseline  # noqa: E402
from compilegate.report.row_words import row_message  # noqa: E402
from compilegate.results.model import parse  # noqa: E402
from compilegate.results.processes import (  # noqa: E402
    compiled_values,
    eager_values,
    step_processes,
    variant_processes,
)
from compilegate.results.yardsticks import tracking_yardstick  # noqa: E402

STEP_SOURCE = REPO_ROOT / "examples" / "test_steps" / "gate_step.py"
PLANT_LEVEL_PCT = 10.0
SPEED_ROWS = ("eager_step_ms", "compiled_step_ms", "speedup")
WORK_COUNTS = ("aten_ops", "kernels", "cuda_graph_replays", "host_syncs", "flops", "allocations")
EXAMPLE_CONFIG = """\
version: 1
steps:
  - name: example
    entry: examples/transformer_step.py:{entry}
    device: {device}
    threads: 1
    warmup: 10
    iterations: {iterations}
    rounds: 10
    timeout_s: 300
    variants: [{{mode: reduce-overhead}}]
"""
GATE_CONFIG = """\
version: 1
steps:
  - name: gate
    entry: step.py:make_step
    device: {device}
    threads: 1
    warmup: 10
    iterations: {iterations}
    rounds: 10
    timeout_s: 300
    variant_processes: {processes}
    numerics: {{enabled: false}}
    variants: [{{mode: default}}]
"""


class Check:
    """The check's state: its folder, what it measured so far, the deadline."""

    def __init__(self, out: Path, device: str, budget_s: float) -> None:
        self.out = out
        self.device = device
        self.deadline = time.monotonic() + budget_s
        self.started = time.time()
        self.record: dict[str, Any] = {"device": device, "gpu": {}, "cases": []}

    def left_s(self) -> float:
        return self.deadline - time.monotonic()

    def save(self) -> None:
        self.record["seconds"] = round(time.time() - self.started, 1)
        (self.out / "gpu-check.json").write_text(json.dumps(self.record, indent=1))
        table = table_text(self.record)
        (self.out / "gpu-check.md").write_text(table + "\n")

    def compilegate(self, *args: str, label: str) -> tuple[int, float]:
        paths = [str(REPO_ROOT / "runner"), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        env["PYTHONUNBUFFERED"] = "1"
        for name in [n for n in env if n.startswith("COMPILEGATE_")]:
            env.pop(name)
        started = time.perf_counter()
        with (self.out / f"{label}.log").open("w") as log:
            try:
                done = subprocess.run(
                    [sys.executable, "-m", "compilegate", *args],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=False,
                    timeout=max(30.0, self.left_s()),
                )
            except subprocess.TimeoutExpired:
                return 124, time.perf_counter() - started  # cut off by the window
        return done.returncode, time.perf_counter() - started


# -- the GPU's state ------------------------------------------------------------------------


def judge_pair(baseline: dict, result: dict):
    """The gate's verdicts on two JSON documents, each read through the door first."""
    return compare_to_baseline(
        parse(baseline, "baseline", "baseline"), parse(result, "result", "result")
    )


def gpu_state() -> dict[str, Any]:
    """NVML's view of device 0 (nvidia-ml-py), or why there is none."""
    try:
        import pynvml
    except ImportError:
        return {"error": "nvidia-ml-py not installed"}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return {"error": f"NVML: {exc}"}
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
        return {
            "name": _text(pynvml.nvmlDeviceGetName(handle)),
            "driver": _text(pynvml.nvmlSystemGetDriverVersion()),
            "sm_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            "mem_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            "throttle_reasons": pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle),
            "persistence": pynvml.nvmlDeviceGetPersistenceMode(handle),
            "power_limit_w": pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000,
            "temperature_c": pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
            "other_processes": len(processes),
        }
    except pynvml.NVMLError as exc:
        return {"error": f"NVML: {exc}"}
    finally:
        pynvml.nvmlShutdown()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# -- judging --------------------------------------------------------------------------------


def speed_rows(baseline: dict, result: dict) -> dict[str, Any]:
    """The overall verdict and the speed rows of `result` judged against `baseline`."""
    report = judge_pair(baseline, result)
    rows = {}
    work = {}
    for row in report.verdicts:
        if row.metric in SPEED_ROWS:
            rows[row.metric] = {
                "verdict": row.verdict if row.gated else "reported",
                "change_pct": row.change,
                "noise_pct": row.noise_pct,
            }
        if row.metric == "step_work":
            work[row.variant] = {"verdict": row.verdict, "message": row_message(row)[:300]}
    return {"overall": report.overall, "exit": report.exit_code, "rows": rows, "step_work": work}


def work_of(document: dict) -> dict[str, Any]:
    """The step-work counts of eager and the first variant, and what bounds each side."""
    step = document["steps"][0]
    sides = {"eager": step.get("eager") or {}}
    if step.get("variants"):
        sides["variant"] = step["variants"][0]
    counts = {
        side: {k: ((doc.get("step_work") or {}).get("counts") or {}).get(k) for k in WORK_COUNTS}
        for side, doc in sides.items()
    }
    bounds = ((step.get("recommendation") or {}).get("bounds")) or []
    return {
        "counts": counts,
        "bounds": {
            b["side"]: {k: b.get(k) for k in ("kind", "step_ms", "dispatch_share", "compute_share")}
            for b in bounds
        },
    }


# -- 1: the example, twice, each the other's one-run baseline --------------------------------


def example_aa(check: Check, iterations: int) -> None:
    entry = "make_step_gpu_small" if check.device == "cuda" else "make_step"
    config = check.out / "example.yml"
    config.write_text(
        EXAMPLE_CONFIG.format(entry=entry, device=check.device, iterations=iterations)
    )
    case: dict[str, Any] = {"case": "example A/A, one-run baseline", "runs": []}
    check.record["cases"].append(case)
    documents = []
    for index in (1, 2):
        out = check.out / f"example-run{index}.json"
        code, seconds = check.compilegate(
            "run",
            "--config",
            str(config),
            "--repo",
            str(REPO_ROOT),
            "--out",
            str(out),
            label=f"example-run{index}",
        )
        case["runs"].append({"exit": code, "seconds": round(seconds, 1)})
        check.save()
        if not out.is_file():
            case["error"] = f"run {index} wrote no result (exit {code}; see example-run{index}.log)"
            check.save()
            return
        document = json.loads(out.read_text())
        if not document["steps"][0].get("variants"):
            case["error"] = f"run {index} measured no variant (exit {code}; cut off by the window?)"
            check.save()
            return
        documents.append((out, document))
        variant = document["steps"][0]["variants"][0]
        case["runs"][-1].update(
            eager_ms=fastest_ms(document, "eager"),
            compiled_ms=fastest_ms(document, "compiled") if variant["status"] == "ok" else None,
            speedup=(variant.get("speedup") or {}).get("median"),
            compile_s=variant.get("compile_s"),
            unsteady=(document.get("run_health") or {}).get("unsteady") or [],
            work=work_of(document),
        )
        check.save()
    first, second = (run["work"]["counts"] for run in case["runs"])
    case["counts_identical"] = first == second
    case["yardstick"] = tracked_yardsticks([document for _, document in documents])
    check.save()
    for (stored, _), (judged, judged_doc), order in (
        (documents[0], documents[1], "run 2 against run 1"),
        (documents[1], documents[0], "run 1 against run 2"),
    ):
        baseline = check.out / f"baseline-{stored.stem}.json"
        baseline.unlink(missing_ok=True)
        code, _ = check.compilegate(
            "baseline",
            "update",
            "--result",
            str(stored),
            "--baseline",
            str(baseline),
            label=f"update-{stored.stem}",
        )
        judged_by = {"order": order, "baseline_update_exit": code}
        if code == 2:  # refused: an unsteady run; judge against it anyway, and say so
            code, _ = check.compilegate(
                "baseline",
                "update",
                "--result",
                str(stored),
                "--baseline",
                str(baseline),
                "--force",
                label=f"update-{stored.stem}-forced",
            )
            judged_by["forced"] = code == 0
        if baseline.is_file():
            code, _ = check.compilegate(
                "compare",
                "--baseline",
                str(baseline),
                "--result",
                str(judged),
                label=f"compare-{judged.stem}",
            )
            judged_by["compare_exit"] = code
            judged_by.update(speed_rows(json.loads(baseline.read_text()), judged_doc))
        case.setdefault("judged", []).append(judged_by)
        check.save()


def tracked_yardsticks(documents: list[dict]) -> dict[str, Any]:
    """Which yardstick the example's eager and compiled step times followed across both
    runs' processes (results/yardsticks.py), with each one's step/yardstick spread."""
    steps = [first_step(document) for document in documents]
    picked = {
        "eager": tracking_yardstick([step_processes(s) for s in steps], eager_values),
        "compiled": tracking_yardstick(
            [variant_processes(s.variants[0]) for s in steps], compiled_values
        ),
    }
    return {
        kind: {"picked": choice.yardstick, "spreads_pct": choice.spreads_pct}
        for kind, choice in picked.items()
    }


# -- 2-4: paired runs of the gate step in a scratch repository -------------------------------


def step_source(eager_ms: float = 0.0, compiled_ms: float = 0.0, plant: str = "") -> str:
    """The gate step with its plants written into the code (a pull request's change)."""
    text = STEP_SOURCE.read_text()
    for old, new in {
        'PLANT = os.environ.get("COMPILEGATE_PLANT", "")': f"PLANT = {plant!r}",
        'PLANT_EAGER_MS = float(os.environ.get("COMPILEGATE_PLANT_EAGER_MS", "0"))': (
            f"PLANT_EAGER_MS = {eager_ms!r}"
        ),
        'PLANT_COMPILED_MS = float(os.environ.get("COMPILEGATE_PLANT_COMPILED_MS", "0"))': (
            f"PLANT_COMPILED_MS = {compiled_ms!r}"
        ),
    }.items():
        if old not in text:
            raise SystemExit(f"gpu-check: {STEP_SOURCE} changed: {old!r} not found")
        text = text.replace(old, new)
    return text


def paired_cases(check: Check, iterations: int, processes: int) -> None:
    repo = check.out / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "compilegate.yml").write_text(
        GATE_CONFIG.format(device=check.device, iterations=iterations, processes=processes)
    )
    (repo / ".gitignore").write_text("__pycache__/\n")
    base = commit(repo, step_source(), "base")
    sizes: dict[str, float] = {}
    for key, label in (
        ("aa", "paired A/A"),
        ("eager", f"{PLANT_LEVEL_PCT:g} % eager plant, paired"),
        ("compiled", f"{PLANT_LEVEL_PCT:g} % compiled plant, paired"),
        ("work", "work plant (one redundant matmul in the loss), paired"),
    ):
        if check.left_s() < 60:
            check.record["cases"].append({"case": label, "error": "not run: out of time"})
            check.save()
            continue
        plant_ms = sizes.get(key, 0.0) * PLANT_LEVEL_PCT / 100
        source = step_source(
            eager_ms=plant_ms if key == "eager" else 0.0,
            compiled_ms=plant_ms if key == "compiled" else 0.0,
            plant="matmul" if key == "work" else "",
        )
        git(repo, "checkout", "-q", "--detach", base)
        commit(repo, source, label)
        out = check.out / f"paired-{key}.json"
        code, seconds = check.compilegate(
            "run",
            "--config",
            str(repo / "compilegate.yml"),
            "--against",
            base,
            "--out",
            str(out),
            label=f"paired-{key}",
        )
        case: dict[str, Any] = {"case": label, "exit": code, "seconds": round(seconds, 1)}
        if plant_ms:
            case["planted_ms"] = plant_ms
        check.record["cases"].append(case)
        base_out = out.with_name(f"paired-{key}.base.json")
        if out.is_file() and base_out.is_file():
            head_doc, base_doc = json.loads(out.read_text()), json.loads(base_out.read_text())
            case.update(speed_rows(base_doc, head_doc))
            case["unsteady"] = (head_doc.get("run_health") or {}).get("unsteady") or []
            if key == "aa":
                sizes = {
                    "eager": fastest_ms(base_doc, "eager"),
                    "compiled": fastest_ms(base_doc, "compiled"),
                }
                case["base_fastest_ms"] = sizes
        else:
            case["error"] = f"no result (exit {code}; see paired-{key}.log)"
        check.save()
        if key == "aa" and not sizes:
            return


# -- the table -------------------------------------------------------------------------------


def table_text(record: dict) -> str:
    lines = [
        "| case | exit | eager step time | compiled step time | speedup | step work | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in record["cases"]:
        if "error" in case and "judged" not in case:
            lines.append(f"| {case['case']} | – | {case['error']} | | | | |")
            continue
        for judged in case.get("judged") or [case]:
            name = case["case"] + (f": {judged['order']}" if "order" in judged else "")
            if judged.get("forced"):
                name += " (baseline refused as unsteady, recorded with --force)"
            code = judged.get("compare_exit", judged.get("exit"))
            cells = [_cell((judged.get("rows") or {}).get(m)) for m in SPEED_ROWS]
            cells.append(_work_cell(judged.get("step_work") or {}))
            seconds = case.get("seconds") or sum(r["seconds"] for r in case.get("runs", []))
            lines.append(f"| {name} | {code} | {' | '.join(cells)} | {seconds:.0f} |")
    for case in record["cases"]:
        for index, run in enumerate(case.get("runs") or [], 1):
            if "eager_ms" in run:
                lines.append(
                    f"\nexample run {index}: eager {run['eager_ms']:.2f} ms, compiled "
                    f"{_ms(run['compiled_ms'])}, speedup {_x(run['speedup'])}, cold compile "
                    f"{_s(run['compile_s'])}, {run['seconds']:.0f} s"
                    + (f", unsteady: {'; '.join(run['unsteady'])}" if run["unsteady"] else "")
                )
    for case in record["cases"]:
        runs = [run for run in case.get("runs") or [] if "work" in run]
        if runs:
            same = "identical" if case.get("counts_identical") else "DIFFERENT"
            lines.append(f"\nexample step-work counts, run 1 / run 2 ({same}):")
            for side in runs[0]["work"]["counts"]:
                values = {
                    key: " / ".join(str(r["work"]["counts"].get(side, {}).get(key)) for r in runs)
                    for key in WORK_COUNTS
                }
                said = ", ".join(f"{key} {value}" for key, value in values.items())
                lines.append(f"- {side}: {said}")
            for index, run in enumerate(runs, 1):
                for side, bound in run["work"]["bounds"].items():
                    facts = ", ".join(f"{k} {v}" for k, v in bound.items())
                    lines.append(f"- run {index} {side} bound: {facts}")
    for case in record["cases"]:
        for kind, picked in (case.get("yardstick") or {}).items():
            spreads = ", ".join(
                f"{name} ±{value:.1f} %" if value is not None else f"{name} not timed"
                for name, value in picked["spreads_pct"].items()
            )
            lines.append(
                f"\nexample {kind} step time followed {picked['picked']} "
                f"(step/yardstick spread across processes: {spreads})"
            )
    for moment in ("before", "after"):
        state = record["gpu"].get(moment)
        if state:
            lines.append(f"\nGPU {moment}: " + ", ".join(f"{k} {v}" for k, v in state.items()))
    return "\n".join(lines)


def _cell(row: dict | None) -> str:
    if not row:
        return "–"
    noise = "" if row["noise_pct"] is None else f" ±{row['noise_pct']:.1f} %"
    return f"{row['verdict']} {row['change_pct']:+.1f} %{noise}"


def _work_cell(rows: dict) -> str:
    """`eager regression: step work: FLOPs …`, the step_work rows that did not pass first."""
    if not rows:
        return "–"
    ordered = sorted(rows.items(), key=lambda item: item[1]["verdict"] == "pass")
    return "; ".join(f"{side} {row['verdict']}" for side, row in ordered)


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} ms"


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}×"


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "out" / "gpu-check")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--budget-s", type=float, default=480.0)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--skip-example", action="store_true", help="only the paired cases")
    parser.add_argument(
        "--variant-processes", type=int, default=4, help="of the gate step in paired runs"
    )
    args = parser.parse_args()
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            sys.stderr.write(
                f"gpu-check: error: no CUDA device visible to torch {torch.__version__}; "
                "run this on a GPU host, or rehearse it with --device cpu\n"
            )
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    check = Check(args.out, args.device, args.budget_s)
    if args.device == "cuda":
        check.record["gpu"]["before"] = gpu_state()
    check.save()
    if not args.skip_example:
        example_aa(check, args.iterations)
    paired_cases(check, args.iterations, args.variant_processes)
    if args.device == "cuda":
        check.record["gpu"]["after"] = gpu_state()
    check.save()
    print(table_text(check.record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
