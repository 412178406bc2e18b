"""Helpers for integration tests: the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from repo_helpers import REPO_ROOT

TORCH_PYTHON = os.environ.get("COMPILEGATE_TORCH_PYTHON", sys.executable)
# An older PyTorch's interpreter, cached outside the repository (`make old-torch-env`).
OLD_TORCH_PYTHON = os.environ.get(
    "COMPILEGATE_OLD_PYTHON", str(Path.home() / ".cache/compilegate/torch-2.4.1/bin/python")
)
# A step measured in seconds: backend eager (no compile), one eager process, no numerics.
QUICK_STEP_SETTINGS = (
    "    variants: [{backend: eager}]\n    warmup: 1\n    iterations: 4\n    rounds: 2\n"
    "    eager_processes: 1\n    numerics: {enabled: false}\n"
)

# A reader's first step factory (a tiny regression MLP), as getting-started and the install
# test write it into a fresh repository.
TINY_STEP_SOURCE = """\
import torch


def make_step(device="cpu"):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    data = torch.randn(64, 16)
    return {
        "model": model.to(device),
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01),
        "batch": lambda i: (data[i % 4 :: 4].to(device), data[i % 4 :: 4, :1].to(device)),
        "loss": lambda model, inputs: torch.nn.functional.mse_loss(model(inputs[0]), inputs[1]),
    }
"""


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    result: dict | None


def run_cli(
    *args: str, cwd: Path = REPO_ROOT, timeout: float = 900, env: dict[str, str] | None = None
) -> CliRun:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    result = None
    if "--out" in args:
        out = Path(args[args.index("--out") + 1])
        out = out if out.is_absolute() else cwd / out
        if out.is_file():
            result = json.loads(out.read_text())
    return CliRun(done.returncode, done.stdout, done.stderr, result)


def write_config(path: Path, body: str) -> Path:
    path.write_text("version: 1\nsteps:\n" + body)
    return path


def assert_one_line_error(run, code: int, *fragments: str) -> None:
    assert run.returncode == code, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("compilegate: error: ")
    assert "Traceback" not in run.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def run_cli_measured(
    *args: str, tmp_path: Path, memory_cap_bytes: int, env: dict[str, str] | None = None
) -> tuple[CliRun, int]:
    """The CLI in a subprocess under an address-space cap, and its own peak RSS in bytes
    (wait4: this child's alone, not the largest of every child the test process reaped)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap_bytes, memory_cap_bytes))

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **(env or {})}
    with open(tmp_path / "stdout", "w+b") as out, open(tmp_path / "stderr", "w+b") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "compilegate", *args],
            cwd=REPO_ROOT, env=env, stdout=out, stderr=err, preexec_fn=cap,
        )  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        run = CliRun(process.returncode, out.read().decode(), err.read().decode(), None)
    return run, usage.ru_maxrss * 1024
