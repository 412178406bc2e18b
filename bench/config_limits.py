"""What the host spends checking the worst compilegate.yml it accepts to read: CPU time,
peak RSS, exit code, the lines it printed.

Each case is a config of CONFIG_MAX_BYTES (256 KiB, the most `load_config_file` reads),
checked by the real CLI in a subprocess (`run --config`, which loads the config before
anything else, as `matrix` loads a pull request's on the host) under a CPU-time cap, so the
code before issue 51 ends in SIGXCPU instead of minutes; the figures are of that process
alone (wait4), its peak RSS minus an idle CLI's.

    torch pattern   torch: ["1.111…1!"]: the version pattern backtracked, quadratic in the
                    string (175.8 CPU-s, issue 51)
    torch mixed     torch: [0, "0", 1, "1", …]: uniqueItems on a list it cannot sort is
                    quadratic (90.6 CPU-s)
    env mixed       the same list as a step's env:, the schema's other uniqueItems
    empty steps     steps: [{}, {}, …]: every schema error collected and sorted (754 MB)
    long entry      a step whose entry is one long string for its pattern to refuse
    many keys       defaults: {k0: 0, k1: 0, …}: one unexpected key each
    deep lists      steps: [[[…0…]]], …: 16 levels of flow lists, the YAML that costs the
                    parser most per byte (4.5 CPU-s in PyYAML's own parser, once)

Run: `PYTHONPATH=runner python bench/config_limits.py [--tiny] [--runner DIR]`; --runner
names another tree's `runner/` (the code before the fix: `git archive 5a5d0e2 runner |
tar -x -C /tmp/old`). --tiny: configs cut 16-fold.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CONFIG_MAX_BYTES = 256 << 10  # runner/compilegate/checkout_files.py
HEAD = 'version: 1\nsteps:\n  - {name: a, entry: "x.py:f"}\n'
MIB = 1 << 20


@dataclass(frozen=True)
class Measured:
    case: str
    input_bytes: int
    exit_code: int
    cpu_s: float
    peak_mib: float
    stderr_lines: int
    last_line: str


def _filled(head: str, items: Iterator[str], tail: str, size_bytes: int) -> str:
    """`head` + as many of `items` as fit in `size_bytes` with `tail`."""
    parts, used = [head], len(head) + len(tail)
    for item in items:
        if used + len(item) > size_bytes:
            break
        parts.append(item)
        used += len(item)
    return "".join(parts) + tail


def _mixed() -> Iterator[str]:
    """0, "0", 1, "1", …: ints and strings, all distinct (sorted() cannot order them)."""
    number = 0
    while True:
        yield f'{number},"{number}",'
        number += 1


def _count(template: str) -> Iterator[str]:
    number = 0
    while True:
        yield template.format(number)
        number += 1


def _repeat(item: str) -> Iterator[str]:
    while True:
        yield item


def worst_configs(size_bytes: int) -> dict[str, str]:
    """Each case's config text, at most `size_bytes` long."""
    # The file ends with `"]\n`: the flow list closes after the last item's comma.
    return {
        "torch pattern": _filled(HEAD + 'torch: ["1.', _repeat("1"), '!"]\n', size_bytes),
        "torch mixed": _filled(HEAD + "torch: [", _mixed(), '"x"]\n', size_bytes),
        "env mixed": _filled(
            'version: 1\nsteps:\n  - {name: a, entry: "x.py:f", env: [',
            _mixed(),
            '"x"]}\n',
            size_bytes,
        ),
        "empty steps": _filled("version: 1\nsteps: [", _repeat("{},"), "{}]\n", size_bytes),
        "long entry": _filled(
            'version: 1\nsteps:\n  - {name: a, entry: "', _repeat("a:"), 'a!"}\n', size_bytes
        ),
        "many keys": _filled(HEAD + "defaults: {", _count("k{}: 0,"), "k: 0}\n", size_bytes),
        # 16 levels, the most CONFIG_MAX_DEPTH lets through: one token a byte, each scanned
        # at a deep flow level (the costliest YAML per byte found)
        "deep lists": _filled(
            "version: 1\nsteps: [", _repeat("[" * 14 + "0" + "]" * 14 + ","), "0]\n", size_bytes
        ),
    }


def run_capped(args: list[str], runner: Path, cpu_cap_s: int) -> tuple[int, int, float, list[str]]:
    """(exit code, peak RSS bytes, CPU seconds, stderr lines) of the CLI."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_cap_s, cpu_cap_s))

    env = {**os.environ, "PYTHONPATH": str(runner)}
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "compilegate", *args],
            stdout=subprocess.DEVNULL, stderr=err, env=env, preexec_fn=cap,
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        lines.append(f"killed by signal {-code} (the CPU cap)")
    return code, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime, lines


def measure_all(runner: Path, work: Path, *, size_bytes: int, cpu_cap_s: int) -> list[Measured]:
    _, idle_bytes, _, _ = run_capped(["--version"], runner, cpu_cap_s)
    measured = []
    for case, text in worst_configs(size_bytes).items():
        config = work / "compilegate.yml"
        config.write_text(text)
        args = ["run", "--config", str(config), "--repo", str(work), "--out", str(work / "r")]
        code, peak, cpu_s, lines = run_capped(args, runner, cpu_cap_s)
        peak_mib = max(peak - idle_bytes, 0) / MIB
        last = lines[-1][:1000] if lines else ""  # one line of a CLI is < 400 chars
        measured.append(Measured(case, len(text), code, cpu_s, peak_mib, len(lines), last))
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="configs cut 16-fold")
    parser.add_argument("--runner", type=Path, default=Path(__file__).parents[1] / "runner")
    parser.add_argument("--cpu-cap-s", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="one JSON object a case")
    args = parser.parse_args(argv)
    size_bytes = CONFIG_MAX_BYTES // (16 if args.tiny else 1)
    with tempfile.TemporaryDirectory(prefix="compilegate-bench-") as folder:
        measured = measure_all(
            args.runner.resolve(), Path(folder), size_bytes=size_bytes, cpu_cap_s=args.cpu_cap_s
        )
    if args.json:
        for m in measured:
            print(json.dumps(m.__dict__))
        return 0
    print(f"{'case':14} {'bytes':>7} {'exit':>4} {'CPU s':>7} {'peak MiB':>9} lines  last line")
    for m in measured:
        print(
            f"{m.case:14} {m.input_bytes:>7} {m.exit_code:>4} {m.cpu_s:>7.2f} "
            f"{m.peak_mib:>9.0f} {m.stderr_lines:>5}  {m.last_line[:160]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
