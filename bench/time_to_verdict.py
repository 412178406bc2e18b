"""Where a run's time goes: `compilegate run` on a small step, split per process and per phase
(issue 28, "Time to verdict").

It writes a config for the example transformer step (examples/transformer_step.py, dropout
on: numerics needs `fallback_random`) to a temporary folder, runs `compilegate run` on it,
and stamps every line the run prints with the time it arrived. Each child's progress lines
("label [elapsed] message") mark its phases; a phase lasts until the child's next line, its
last one until the next process starts (or the run ends). Printed: each process's wall
seconds and its phases grouped (start: the harness importing torch; import, build, eager
warm-up, compile, timed rounds, memory and epoch passes, the float64 reference, numerics,
other), the run's total, and the total over what the verdict cannot do without: the cold
compiles plus the timed rounds.

    python bench/time_to_verdict.py [--variants default,reduce-overhead] [--iterations 30]
        [--rounds 5] [--warmup 3] [--processes 4] [--python PY] [--json FILE]

On this project's 2-core CPU one variant with the defaults here took 197-285 s with other
helpers' runs beside it (load average 4-10; its cold compile 73-125 s of that).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "runner"))

from compilegate.child.protocol import PHASES, phase_of  # noqa: E402

# "  transformer/default#2 [  12.3s] measuring: 30 iterations per side in 5 rounds"
PROGRESS = re.compile(r"^\s+(?P<label>\S+) \[\s*(?P<elapsed>[0-9.]+)s\] (?P<message>.*)$")
GROUPS = tuple(name for name, _ in PHASES)  # the order phases are printed in


@dataclass
class Process:
    label: str
    started: float  # seconds into the run at which the child's clock started
    lines: list[tuple[float, str]] = field(default_factory=list)  # (child's elapsed, message)
    ended: float = 0.0  # seconds into the run at which the next process (or the run) began

    @property
    def wall_s(self) -> float:
        return self.ended - self.started

    def phases(self) -> dict[str, float]:
        """Seconds per phase group; the last phase runs to the process's end."""
        out: dict[str, float] = defaultdict(float)
        first_elapsed = self.lines[0][0] if self.lines else 0.0
        out["start"] += first_elapsed  # interpreter, harness and torch, before its first line
        end_elapsed = self.ended - self.started
        for (at, message), nxt in zip(self.lines, [*self.lines[1:], (end_elapsed, "")]):
            out[phase_of(message)] += max(nxt[0] - at, 0.0)
        return dict(out)


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
    """Run compilegate once; the processes it started, its wall seconds, its result."""
    with tempfile.TemporaryDirectory(prefix="time-to-verdict-") as tmp:
        folder = Path(tmp)
        config = write_config(folder, args)
        out = folder / "result.json"
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")}
        command = [args.python, "-m", "compilegate", "run", "--config", str(config)]
        command += ["--out", str(out), "--repo", str(REPO_ROOT / "examples")]
        start = time.perf_counter()
        proc = subprocess.Popen(
            command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        processes: dict[str, Process] = {}
        order: list[Process] = []
        others: list[str] = []  # the run's own lines: shown when it measured nothing
        assert proc.stderr is not None
        for line in proc.stderr:
            now = time.perf_counter() - start
            match = PROGRESS.match(line.rstrip("\n"))
            if match is None:
                others = [*others[-19:], line.rstrip("\n")]
                continue
            label, elapsed = match["label"], float(match["elapsed"])
            if label not in processes:
                if order:
                    order[-1].ended = now - elapsed  # this child began about then
                processes[label] = Process(label, now - elapsed)
                order.append(processes[label])
            processes[label].lines.append((elapsed, match["message"]))
        proc.wait()
        total = time.perf_counter() - start
        if not order:
            sys.exit(
                f"compilegate run measured nothing (exit {proc.returncode}):\n" + "\n".join(others)
            )
        if order:
            order[-1].ended = total
        document = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    return order, total, document


def cold_compile_s(processes: list[Process]) -> float:
    """Compile seconds of the processes that compiled cold: each variant's first."""
    return sum(p.phases().get("compile", 0.0) for p in processes if _is_first_variant(p))


def _is_first_variant(process: Process) -> bool:
    return "#" not in process.label and not process.label.endswith("/eager")


def summary(processes: list[Process], total: float) -> dict:
    per_process = [
        {"label": p.label, "wall_s": round(p.wall_s, 1), "phases": _rounded(p.phases())}
        for p in processes
    ]
    timed = sum(p.phases().get("timed", 0.0) for p in processes)
    floor = cold_compile_s(processes) + timed
    return {
        "processes": per_process,
        "total_s": round(total, 1),
        "cold_compiles_s": round(cold_compile_s(processes), 1),
        "timed_s": round(timed, 1),
        "total_over_floor": round(total / floor, 2) if floor else None,
    }


def _rounded(phases: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in sorted(phases.items(), key=_group_order) if v >= 0.05}


def _group_order(item: tuple[str, float]) -> int:
    return GROUPS.index(item[0]) if item[0] in GROUPS else len(GROUPS)


def print_summary(result: dict) -> None:
    for process in result["processes"]:
        phases = "  ".join(f"{k} {v:.1f}" for k, v in process["phases"].items())
        print(f"{process['label']:<32} {process['wall_s']:6.1f} s   {phases}")
    print(
        f"total {result['total_s']:.1f} s; cold compiles {result['cold_compiles_s']:.1f} s "
        f"+ timed rounds {result['timed_s']:.1f} s; total / (compiles + timed) = "
        f"{result['total_over_floor']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", default="default")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=4, help="variant_processes")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", type=Path, help="also write the split here")
    args = parser.parse_args()
    processes, total, document = run(args)
    result = summary(processes, total)
    steps = document.get("steps") or [{}]
    result["verdict_status"] = steps[0].get("status")
    print_summary(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
