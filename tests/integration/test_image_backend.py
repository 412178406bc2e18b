"""The image backend in real processes (issue 52, item 1): inside the image compilegate runs
with the image's torch, no Docker, no venv per version. This CI's virtual environment acts as
"the image": `compilegate run --backend image` measures with its torch, the children keep
their environment allow-list (a token planted in the parent's environment never reaches the
step), and the note says who they run as. `matrix --backend image` makes a version other than
the one this interpreter holds an error row, never a silent run of this torch.
The switch from root to the image's uid 1000 is
tests/integration/containers/test_image_backend_in_container.py's (inside the real image)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import QUICK_STEP_SETTINGS, TINY_STEP_SOURCE, run_cli, write_config

pytestmark = pytest.mark.compile  # Dynamo with its eager backend: no Inductor compile

PLANTED = "ghs_plantedImageBackendToken0123456789"
# The tiny step, refusing to build where the planted token reached its environment.
STEP = TINY_STEP_SOURCE.replace(
    'def make_step(device="cpu"):\n',
    'def make_step(device="cpu"):\n'
    "    import os\n"
    f"    if any({PLANTED!r} in value for value in os.environ.values()):\n"
    '        raise RuntimeError("the planted token reached the step")\n',
)
TORCH = importlib.metadata.version("torch")


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "steps.py").write_text(STEP)
    body = "  - name: tiny\n    entry: steps.py:make_step\n    threads: 1\n" + QUICK_STEP_SETTINGS
    write_config(repo / "compilegate.yml", body)
    return repo


def test_run_measures_with_this_interpreters_torch_and_keeps_the_allow_list(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path)
    run = run_cli(
        "run", "--backend", "image", "--config", str(repo / "compilegate.yml"),
        "--out", str(tmp_path / "result.json"),
        env={"GITHUB_TOKEN": PLANTED, "ACTIONS_RUNTIME_TOKEN": PLANTED},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.result is not None and run.result["steps"][0]["status"] == "ok", run.stderr[-3000:]
    assert run.result["environment"]["torch"] == TORCH
    notes = [line for line in run.stderr.splitlines() if "measuring children run as" in line]
    assert len(notes) == 1, run.stderr[-2000:]


def test_run_refuses_an_interpreter_without_torch_in_one_line(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    repo = repository(tmp_path)
    run = run_cli(
        "run", "--backend", "image", "--python", str(bare / "bin" / "python"),
        "--config", str(repo / "compilegate.yml"), "--out", str(tmp_path / "result.json"),
    )  # fmt: skip
    assert run.returncode == 2 and run.result is None, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("compilegate: error: --backend image: ") and "has no torch" in line


def test_matrix_refuses_a_version_the_image_does_not_hold_as_its_error_row(
    tmp_path: Path,
) -> None:
    """Measured, the image's own version is the inner `run --backend image` above."""
    repo = repository(tmp_path)
    out = tmp_path / "out"
    run = run_cli(
        "matrix", "--backend", "image", "--torch", "2.4.1",
        "--config", str(repo / "compilegate.yml"), "--out-dir", str(out),
    )  # fmt: skip
    assert run.returncode == 3, run.stdout[-3000:] + run.stderr[-3000:]
    error = (out / "torch-2.4.1" / "error.txt").read_text()
    assert f"backend image measures with the torch installed here ({TORCH}" in error
    assert "one job per version" in error and not (out / "torch-2.4.1" / "result.json").exists()
    assert "Traceback" not in run.stdout + run.stderr
