"""`compilegate bisect` against bisecting by hand (issue 55): the wall time of one bisection
over a real history against one full `compilegate run` per commit.

It builds the test's history (tests/integration/bisect_history.py: a small step committed
`--commits` times, an `.item()` added at commit 19 and a data-dependent branch at 27, each
commit otherwise only renumbered), runs `compilegate bisect --good <first> --bad <last>`
once, then `compilegate run` (the full run: eager references, cold compiles, timed rounds)
at `--full-runs` commits spread over the range, each in a fresh worktree. One full run per
commit is extrapolated as the full runs' mean times the commits after the good one (every
one of them is a run, as when a user walks the range); a hand bisection by full runs as
that mean times ⌈log2 commits⌉ + 2 (the ends, then halving).

    python bench/bisect_bench.py [--commits 32] [--full-runs 3] [--settings quick|defaults]

`--settings quick` measures with the history's own short schedule (warm-up 1, 3
iterations in 2 rounds, one eager process); `defaults` drops those lines so the config's
defaults apply, as a user's first config would (the counting pass does the same work
either way, less the untimed iterations). Not named bisect.py: a script's folder comes
first on sys.path, and `import bisect` (the standard library's, which `random` imports)
would find it.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from bisect_history import CONFIG, build_history, git  # noqa: E402

SCHEDULE = ("    warmup: 1\n", "    iterations: 3\n", "    rounds: 2\n", "    eager_processes: 1\n")


def compilegate(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "runner")}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "compilegate", *args], env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    return time.perf_counter() - started, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=32)
    parser.add_argument("--full-runs", type=int, default=3)
    parser.add_argument("--settings", choices=("quick", "defaults"), default="quick")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compilegate-bisect-bench-") as folder:
        repo = Path(folder) / "repo"
        config = CONFIG
        if args.settings == "defaults":
            for line in SCHEDULE:
                config = config.replace(line, "")
        shas = build_history(repo, args.commits)
        # The checkout's config, not committed: bisect and every full run read it (--repo
        # names the commit's tree), as the policy is read.
        (repo / "compilegate.yml").write_text(config)
        bisect_s, done = compilegate(
            "bisect", "--config", str(repo / "compilegate.yml"), "--good", shas[0]
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            return 1
        print(done.stdout, end="")
        probes = int(re.findall(r"^(\d+) probes? of", done.stdout, re.M)[-1])
        print(f"bisect: {bisect_s:.1f} s wall, {probes} probes over {len(shas)} commits")
        picks = sorted({round(i * (len(shas) - 1) / max(args.full_runs - 1, 1))
                        for i in range(args.full_runs)})  # fmt: skip
        full_s = []
        for index in picks:
            tree = Path(folder) / f"tree{index}"
            git(repo, "worktree", "add", "-q", "--detach", str(tree), shas[index])
            seconds, run = compilegate("run", "--config", str(repo / "compilegate.yml"),
                                       "--repo", str(tree),
                                       "--out", str(Path(folder) / f"r{index}.json"))  # fmt: skip
            if run.returncode != 0:
                sys.stderr.write(run.stderr[-3000:])
                return 1
            full_s.append(seconds)
            print(f"full run at commit {index + 1}: {seconds:.1f} s")
        mean_s = statistics.mean(full_s)
        walked = len(shas) - 1
        halved = math.ceil(math.log2(len(shas))) + 2
        print(
            f"one full run per commit ({walked} commits after the good one): "
            f"{mean_s * walked:.0f} s extrapolated ({mean_s:.1f} s mean of {len(full_s)}), "
            f"{mean_s * walked / bisect_s:.1f}x bisect's wall time"
        )
        print(
            f"a hand bisection by full runs ({halved} runs): {mean_s * halved:.0f} s, "
            f"{mean_s * halved / bisect_s:.1f}x bisect's"
        )
        load = os.getloadavg()[0]
        print(f"load average at the end: {load:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
