"""What the host spends reading a hostile document or config: peak RSS, CPU time, exit code.

Each case runs the real CLI in a subprocess (as a runner would) under an address-space cap
and a CPU-time cap, so the code before issue 38 ends in MemoryError or SIGXCPU instead of
taking the machine; the figures are of that process alone (wait4), its peak minus an idle
CLI's (Linux carries ru_maxrss across execve: both hold this process's own peak).

    wide N MiB      `compare --result` of N MiB of `[{},{},…]` (what a container's
                    result.json became on the host: 2.6 GB and 19 s for 48 MiB)
    nested          `compare --result` of 200,000 nested `[` (a RecursionError: exit 3)
    empty steps     `compare --result` of a document of 100,000 `{}` steps (400 KB; one
                    schema error per value)
    config nested   `run --config` of a 200 KB compilegate.yml of `[` (12 minutes of PyYAML)

Run: `PYTHONPATH=runner python bench/document_limits.py [--tiny] [--runner DIR]`; --runner
names another tree's `runner/` (the code before the fix: `git worktree add`, or `git
archive 6cdc455 runner | tar -x -C /tmp/old`). --tiny: sizes cut 64-fold (what the test runs).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BASELINE = REPO_ROOT / "tests/unit/data/nanogpt/baseline.json"
MIB = 1 << 20


@dataclass(frozen=True)
class Measured:
    case: str
    input_bytes: int
    exit_code: int
    peak_mib: float
    cpu_s: float
    last_line: str


def write_wide(path: Path, size_bytes: int) -> None:
    """`[{},{},…]` of `size_bytes`, written in chunks: this process stays small, and so does
    the peak RSS its children inherit."""
    count = size_bytes // 3 - 1
    chunk = b"{}," * (1 << 18)
    with open(path, "wb") as handle:
        handle.write(b"[")
        for _ in range(count // (1 << 18)):
            handle.write(chunk)
        handle.write(b"{}," * (count % (1 << 18)) + b"{}]")


def write_empty_steps(path: Path, count: int) -> None:
    document = json.loads(BASELINE.read_text())
    document["steps"] = [{} for _ in range(count)]
    path.write_text(json.dumps(document))


def run_capped(
    args: list[str], runner: Path, memory_cap_bytes: int, cpu_cap_s: int
) -> tuple[int, int, float, str]:
    """(exit code, peak RSS bytes, CPU seconds, last line of stderr) of the CLI."""

    def caps() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap_bytes, memory_cap_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_cap_s, cpu_cap_s))

    env = {**os.environ, "PYTHONPATH": str(runner)}
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "compilegate", *args],
            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=caps,
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    last = lines[-1][:160] if lines else ""
    if code < 0:
        last = f"killed by signal {-code} (a cap) {last}".strip()
    return code, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime, last


def measure_all(
    runner: Path, work: Path, *, scale: int, memory_cap_bytes: int, cpu_cap_s: int
) -> list[Measured]:
    _, idle, _, _ = run_capped(["--version"], runner, memory_cap_bytes, cpu_cap_s)
    head = "version: 1\nsteps:\n  - name: a\n    entry: x.py:f\n    variants: "
    # (case, the file's name, what writes it)
    cases: list[tuple[str, str, Callable[[Path], object]]] = [
        (
            f"wide {mib / scale:g} MiB",
            "forged.json",
            partial(write_wide, size_bytes=mib * MIB // scale),
        )
        for mib in (16, 32, 48, 256)
    ]
    cases += [
        ("nested", "forged.json", lambda path: path.write_bytes(b"[" * 200_000)),
        ("empty steps", "forged.json", partial(write_empty_steps, count=100_000 // scale)),
        (
            "config nested",
            "compilegate.yml",
            lambda path: path.write_text(head + "[" * (200_000 // scale)),
        ),
    ]
    measured = []
    for case, name, write in cases:
        path = work / name
        write(path)
        if name == "compilegate.yml":
            args = ["run", "--config", str(path), "--repo", str(work), "--out", str(work / "r")]
        else:
            args = ["compare", "--baseline", str(BASELINE), "--result", str(path)]
        code, peak, cpu_s, last = run_capped(args, runner, memory_cap_bytes, cpu_cap_s)
        peak_mib = max(peak - idle, 0) / MIB
        measured.append(Measured(case, path.stat().st_size, code, peak_mib, cpu_s, last))
        path.unlink()
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="sizes cut 64-fold")
    parser.add_argument("--runner", type=Path, default=REPO_ROOT / "runner")
    parser.add_argument("--memory-cap-gib", type=float, default=4.0)
    parser.add_argument("--cpu-cap-s", type=int, default=120)
    parser.add_argument("--json", action="store_true", help="one JSON object a case")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="compilegate-bench-") as folder:
        measured = measure_all(
            args.runner.resolve(), Path(folder), scale=64 if args.tiny else 1,
            memory_cap_bytes=int(args.memory_cap_gib * 2**30), cpu_cap_s=args.cpu_cap_s,
        )  # fmt: skip
    if args.json:
        for m in measured:
            print(json.dumps(m.__dict__))
        return 0
    print(f"{'case':14} {'input':>10} {'exit':>4} {'peak MiB':>9} {'CPU s':>7}  last line")
    for m in measured:
        size = f"{m.input_bytes / MIB:.1f} MiB" if m.input_bytes >= MIB else f"{m.input_bytes} B"
        print(
            f"{m.case:14} {size:>10} {m.exit_code:>4} {m.peak_mib:>9.0f} {m.cpu_s:>7.2f}  "
            f"{m.last_line}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
