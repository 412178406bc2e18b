"""A container hands the host a result file: it is read within the document's limits, on
the real engine (issue 38).

The step (examples/test_steps/forges_its_result.py) writes /out/result.json as 48 MiB of
`[{},{},…]`, or as 200,000 nested `[`, and kills its compilegate. Before the fix the host's
`matrix --backend docker` parsed the file whole: 2.6 GB of RSS and 19 s of CPU for the 48
MiB (the cap was 256 MiB: ~13 GB reachable), a RecursionError (exit 3, no report) for the
nesting. Now: the version is an error naming the limit, the report is written, and the
host's memory is an idle CLI's. Issue 51: a 1.1 MB result within every limit, NaN under
31 keys of 4 KB, cost the host 2.8 GB (every NaN's key path built whole, 31 GB in all): now
the first paths, each cut, and the same bounded memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker


# The host CLI's address space: the code before issue 51 grew to 22 GB on the long-keys
# forgery until the kernel's OOM killer stopped it (and whatever else it chose).
MEMORY_CAP_BYTES = 4 << 30


def run_measured(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, int]:
    """Exit code, output and the process's peak RSS in bytes (wait4: its own), under an
    address-space cap."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))

    with open(cwd / "output.txt", "w+b") as out:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=out, stderr=out, preexec_fn=cap
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return process.returncode, out.read().decode(errors="replace"), usage.ru_maxrss * 1024


@pytest.mark.parametrize(
    ("shape", "refusal"),
    [
        (f"wide:{48 << 20}", "result.json refused: larger than 16777216 bytes"),
        ("nested", "result file refused: nested deeper than 32 levels (max_depth)"),
        ("long-keys", "not a valid compilegate result document: at 00AAAA"),
    ],
    ids=["wide-48MiB", "nested", "long-keys"],
)
def test_a_forged_result_is_refused_in_bounded_memory_and_reported(
    local_torch_image: Any, base_image: str, tmp_path: Path, shape: str, refusal: str
) -> None:
    config = write_tiny_config(
        tmp_path / "cfg",
        name="forger",
        entry="examples/test_steps/forges_its_result.py:make_step",
        extra="    env: [FORGE_RESULT_SHAPE]\n",
    )
    out_dir = tmp_path / "results"
    command = [
        sys.executable, "-I", "-m", "compilegate", "matrix", "--backend", "docker",
        "--base-image", base_image, "--torch", LOCAL_TORCH, "--config", str(config),
        "--repo", str(REPO_ROOT), "--out-dir", str(out_dir), "--timeout-s", "600",
    ]  # fmt: skip
    env = {**os.environ, "FORGE_RESULT_SHAPE": shape}
    code, output, peak = run_measured(command, tmp_path, env)
    sys.stderr.write(output[-3000:])
    # Linux carries ru_maxrss across execve: an idle CLI measured the same way holds the
    # forked pytest's own peak too.
    _, _, idle = run_measured(
        [sys.executable, "-I", "-m", "compilegate", "--version"], tmp_path, env
    )
    grew_mib = (peak - idle) / 2**20
    sys.stderr.write(f"matrix --backend docker, {shape}: {grew_mib:.0f} MiB over an idle CLI\n")
    assert code == 3, output[-3000:]
    assert "internal error" not in output and "Traceback" not in output, output[-3000:]
    report = (out_dir / "report.md").read_text()
    assert refusal.replace("_", "\\_") in report or refusal in report, report
    assert grew_mib < 150, f"peak RSS {peak / 2**20:.0f} MiB, {grew_mib:.0f} MiB over an idle CLI"
