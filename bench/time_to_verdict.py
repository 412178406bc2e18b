"""Where a run's time goes: `compilegate run` on a small step, split per process and per phase
(issue 28, "Time to verdict").

It writes a config for the example transformer step (examples/transformer_step.py, dropout
on: numerics needs `fallback_random`) to a temporary folder, runs `compilegate run` on it,
and reads where each process's time went from the result document, which records each
process's phases (`processes[].phases_s`, as its progress lines began them; issue 40: the
bench once read the progress lines `run` stopped printing). Printed: each process's wall
seconds and its phases grouped (start: the harness importing torch; import, build, eager
warm-up, compile, timed rounds, memory and epoch passes, the float64 reference, numerics,
other), the run's total, and the total over what the verdict cannot do without: the cold
compiles plus the timed rounds; then the seconds of that total the numerics spent compiling
the step again (a step with dropout: `fallback_random`, bench/numerics_rng.py says why) and
the ratio without them.

    python bench/time_to_verdict.py [--variants default,reduce-overhead] [--iterations 30]
        [--rounds 5] [--warmup 3] [--processes 4] [--python PY] [--json FILE]
        [--one-at-a-time | --compare] [--load N]
    python bench/time_to_verdict.py --config examples/gpu/compilegate.yml [--repo .]

`--config FILE` runs a config of your own instead (every step of it; `--repo`, the
repository its entries are in, defaults to this one): issue 40 asks for the GPU example's
split on one card against 1.5 x and 6 minutes, and the total's minutes are printed with it.

`--compare` runs it four times in one go, in the order A B B A: each process started only
at its turn (`run --one-at-a-time`), and as `run` does by default (each process's successor
started ahead, importing torch and Dynamo while it runs: run/launcher.py); it prints each
run's split and ratio. `--load N` keeps N busy loops running beside them.

On this project's 2-core CPU one variant with the defaults here took 197-285 s with other
helpers' runs beside it (load average 4-10; its cold compile 73-125 s of that).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from bench_common import busy_loops  # noqa: E402

from compilegate.child.protocol import Phase  # noqa: E402

GROUPS = tuple(phase.value for phase in Phase)  # the order phases are printed in


@dataclass
class Process:
    """One child process of the run: its label and its phases' wall seconds, as the result
    document records them (`processes[].phases_s`, child/protocol.py Phase)."""

    label: str
    phases_s: dict[str, float] = field(default_factory=dict)
    first_of_variant: bool = False

    @property
    def wall_s(self) -> float:
        return sum(self.phases_s.values())

    def phases(self) -> dict[str, float]:
        return dict(self.phases_s)


def write_config(folder: Path, args: argparse.Namespace) -> Path:
    variants = ", ".join(f"{{mode: {m}}}" for m in args.variants.split(","))
    config = folder / "compilegate.yml"
    config.write_text(
        "version: 1\n"
        "steps:\n"
        "  - name: transformer\n"
        "    entry: transformer_step.py:make_step\n"
        "    device: auto\n"
        f"    variants: [{variants}]\n"
        "    threads: 1\n"
        f"    warmup: {args.warmup}\n"
        f"    iterations: {args.iterations}\n"
        f"    rounds: {args.rounds}\n"
        f"    variant_processes: {args.processes}\n"
        "    timeout_s: 600\n",
        encoding="utf-8",
    )
    return config


def run(args: argparse.Namespace) -> tuple[list[Process], float, dict]:
    """Run compilegate once; the processes it started (from the result document), its wall
    seconds, its result."""
    with tempfile.TemporaryDirectory(prefix="time-to-verdict-") as tmp:
        folder = Path(tmp)
        config = args.config or write_config(folder, args)
        repo = args.repo if args.config else REPO_ROOT / "examples"
        out = folder / "result.json"
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")}
        command = [args.python, "-m", "compilegate", "run", "--config", str(config)]
        command += ["--out", str(out), "--repo", str(repo)]
        if args.one_at_a_time:
            command.append("--one-at-a-time")
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        total = time.perf_counter() - start
        document = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    processes = processes_of(document)
    if not processes:
        tail = (done.stdout + done.stderr).strip().splitlines()[-20:]
        sys.exit(f"compilegate run measured nothing (exit {done.returncode}):\n" + "\n".join(tail))
    return processes, total, document


def processes_of(document: dict) -> list[Process]:
    """Every process of every step, in the order they ran: the eager references, then each
    variant's (the first of a variant compiled cold)."""
    found = []
    for step in document.get("steps") or []:
        eager = (step.get("eager") or {}).get("processes") or []
        for index, record in enumerate(eager):
            found.append(Process(f"{step['name']}/eager#{index + 1}", _phases(record)))
        for variant in step.get("variants") or []:
            for index, record in enumerate(variant.get("processes") or []):
                label = f"{step['name']}/{variant['id']}" + (f"#{index + 1}" if index else "")
                found.append(Process(label, _phases(record), first_of_variant=index == 0))
    return found


def _phases(record: dict) -> dict[str, float]:
    return {k: float(v) for k, v in (record.get("phases_s") or {}).items()}


def cold_compile_s(processes: list[Process]) -> float:
    """Compile seconds of the processes that compiled cold: each variant's first."""
    return sum(p.phases().get("compile", 0.0) for p in processes if p.first_of_variant)


def numerics_compile_s(document: dict) -> float:
    """Seconds the variants' numerics spent in a compiled copy compiled again (a step that
    draws random numbers: `fallback_random`, a second compile; numerics.compiled_copy_s)."""
    total = 0.0
    for step in document.get("steps") or []:
        for variant in step.get("variants") or []:
            numerics = variant.get("numerics") or {}
            if numerics.get("compiled_graphs") or numerics.get("fallback_random"):
                total += float(numerics.get("compiled_copy_s") or 0.0)
    return total


def summary(processes: list[Process], total: float, document: dict | None = None) -> dict:
    per_process = [
        {"label": p.label, "wall_s": round(p.wall_s, 1), "phases": _rounded(p.phases())}
        for p in processes
    ]
    timed = sum(p.phases().get("timed", 0.0) for p in processes)
    floor = cold_compile_s(processes) + timed
    second = numerics_compile_s(document or {})
    return {
        "processes": per_process,
        "total_s": round(total, 1),
        "cold_compiles_s": round(cold_compile_s(processes), 1),
        "timed_s": round(timed, 1),
        "total_over_floor": round(total / floor, 2) if floor else None,
        "numerics_compile_s": round(second, 1),
        "total_over_floor_without_it": round((total - second) / floor, 2) if floor else None,
        "cold_compile_record": cold_compile_record(document or {}),
    }


def cold_compile_record(document: dict) -> list[dict]:
    """Each variant's cold compile as the document records it (wall and CPU seconds of the
    compile window beyond eager's warm-up): compile cost is judged on the CPU seconds."""
    found = []
    for step in document.get("steps") or []:
        for variant in step.get("variants") or []:
            first = (variant.get("processes") or [{}])[0]
            found.append(
                {
                    "variant": variant.get("id"),
                    "wall_s": first.get("compile_wall_s"),
                    "cpu_s": first.get("compile_cpu_s"),
                }
            )
    return found


def _rounded(phases: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in sorted(phases.items(), key=_group_order) if v >= 0.05}


def _group_order(item: tuple[str, float]) -> int:
    return GROUPS.index(item[0]) if item[0] in GROUPS else len(GROUPS)


def print_summary(result: dict) -> None:
    for process in result["processes"]:
        phases = "  ".join(f"{k} {v:.1f}" for k, v in process["phases"].items())
        print(f"{process['label']:<32} {process['wall_s']:6.1f} s   {phases}")
    print(
        f"total {result['total_s']:.1f} s ({result['total_s'] / 60:.1f} min); "
        f"cold compiles {result['cold_compiles_s']:.1f} s "
        f"+ timed rounds {result['timed_s']:.1f} s; total / (compiles + timed) = "
        f"{result['total_over_floor']}"
    )
    for cold in result["cold_compile_record"]:
        wall, cpu = cold["wall_s"], cold["cpu_s"]
        if isinstance(wall, (int, float)) and isinstance(cpu, (int, float)):
            print(f"{cold['variant']}: cold compile {wall:.1f} s wall, {cpu:.1f} CPU-s (recorded)")
    print(
        f"of it the numerics' compiled copies compiled again: {result['numerics_compile_s']:.1f} s "
        f"(without them: {result['total_over_floor_without_it']} x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="default")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=4, help="variant_processes")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="run's --one-at-a-time: no process starts before its turn",
    )
    parser.add_argument(
        "--compare",
        action="store_true",
        help="run four times, one process at a time (run --one-at-a-time) and with each "
        "started ahead (run's default) in the order A B B A, and print each",
    )
    parser.add_argument(
        "--load", type=int, default=0, help="busy loops beside the runs (bench_common.py)"
    )
    parser.add_argument("--json", type=Path, help="also write the split here")
    parser.add_argument("--config", type=Path, help="run this config instead of the example step's")
    parser.add_argument(
        "--repo", type=Path, default=REPO_ROOT, help="with --config: its repository"
    )
    args = parser.parse_args()
    kinds = [True, False, False, True] if args.compare else [args.one_at_a_time]
    results: dict[str, list[dict]] = {}
    with busy_loops(args.load):
        for one_at_a_time in kinds:
            args.one_at_a_time = one_at_a_time
            name = "one at a time" if one_at_a_time else "started ahead"
            if args.compare:
                print(f"-- {name} --")
            processes, total, document = run(args)
            result = summary(processes, total, document)
            steps = document.get("steps") or [{}]
            result["verdict_status"] = steps[0].get("status")
            print_summary(result)
            results.setdefault(name, []).append(result)
    if args.compare:
        for name, runs in results.items():
            totals = ", ".join(f"{r['total_s']:.1f} s" for r in runs)
            ratios = ", ".join(str(r["total_over_floor"]) for r in runs)
            print(f"{name}: total {totals}; total / (compiles + timed) {ratios}")
    if args.json:
        written = results if args.compare else results[next(iter(results))][0]
        args.json.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
