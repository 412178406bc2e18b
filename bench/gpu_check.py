"""`make gpu-check`: the example transformer on a GPU, launch-bound and GPU-bound, in one call.

Runs `compilegate run` on examples/gpu/compilegate.yml (cold compiles, fresh Inductor
cache per variant) and prints a short table: eager and compiled ms/step, speedup with its
95 % CI, cold compile seconds, A/A noise, break-even steps and peak memory. Budget: under
8 minutes on one H200. Exits 2 without a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write(
            "gpu-check: error: no CUDA device visible to torch "
            f"{torch.__version__}; run this on a GPU host\n"
        )
        return 2
    out = Path(os.environ.get("GPU_CHECK_OUT", REPO_ROOT / "out" / "gpu-result.json"))
    command = [
        sys.executable,
        "-m",
        "compilegate",
        "run",
        "--config",
        str(REPO_ROOT / "examples" / "gpu" / "compilegate.yml"),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")}
    code = subprocess.run(command, env=env, check=False).returncode
    if not out.is_file():
        return code or 3
    print_summary(json.loads(out.read_text()))
    return code


def print_summary(document: dict) -> None:
    env = document["environment"]
    print(f"\ngpu-check · {env['gpu_name']} · torch {env['torch']} · CUDA {env['cuda']}")
    header = (
        "step",
        "variant",
        "eager ms",
        "compiled ms",
        "speedup (95% CI)",
        "compile s",
        "A/A noise",
        "break-even",
        "peak MiB (eager)",
    )
    rows = [header]
    for step in document["steps"]:
        if step["status"] != "ok":
            rows.append((step["name"], "-", "ERROR", step["error"][:60], "", "", "", "", ""))
            continue
        for v in step["variants"]:
            if v["status"] != "ok":
                rows.append(
                    (step["name"], v["id"], "ERROR", (v["error"] or "")[:60], "", "", "", "", "")
                )
                continue
            sp = v["speedup"]
            peak = v.get("peak_bytes")
            eager_peak = v.get("eager_peak_bytes")
            rows.append(
                (
                    step["name"],
                    v["id"],
                    f"{v['eager_step_ms']['median']:.2f}",
                    f"{v['step_ms']['median']:.2f}",
                    f"{sp['median']:.2f}x ({sp['ci_low']:.2f}-{sp['ci_high']:.2f})",
                    f"{v['compile_s']:.1f}",
                    f"±{v['noise_pct']:.1f}%",
                    "never" if v["break_even_steps"] is None else f"{v['break_even_steps']:,.0f}",
                    "n/a" if peak is None else f"{peak / 2**20:.0f} ({eager_peak / 2**20:.0f})",
                )
            )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
