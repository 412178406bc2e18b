"""Where am I, on a Docker engine without the NVIDIA runtime (issue 52, item 2): this
project's engine has none, like ARC's dind sidecar. A step with `device: cuda`, or GPUs asked
for, would fail at the container's start or measure on the CPU; instead `compilegate where`,
`compilegate matrix --backend docker` (before it builds anything) and the action's "Where
am I" step say in one line that the engine cannot hand a container the GPU, and what to use.
The engine is asked to start a container with a GPU request to find that out (docker info
cannot show the NVIDIA hook): its refusal is the answer."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from actions_runner import Runner, workflow_commands
from cli_helpers import QUICK_STEP_SETTINGS, assert_one_line_error, run_cli, write_config

from repo_helpers import REPO_ROOT, TESTS

pytestmark = pytest.mark.docker

EVENT = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json").read_text())


@pytest.fixture
def engine_without_gpu(docker_client: Any) -> None:
    info = docker_client.info()
    if "nvidia" in (info.get("Runtimes") or {}):
        pytest.skip("this engine has the NVIDIA runtime: the case is an engine without it")


def cuda_config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(
        folder / "compilegate.yml",
        "  - name: big\n    entry: steps.py:make_step\n    device: cuda\n" + QUICK_STEP_SETTINGS,
    )


def test_where_refuses_gpus_on_this_engine_in_one_line(
    engine_without_gpu: None, tmp_path: Path
) -> None:
    run = run_cli("where", "--gpus", "all", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    (line,) = run.stdout.splitlines()
    assert line.startswith("compilegate: the Docker engine at ")
    assert "cannot hand a container the GPU (no NVIDIA runtime)" in line
    assert "that --gpus asks for" in line and "never measures a GPU step on the CPU" in line
    assert run_cli("where", "--gpus", "", cwd=tmp_path).returncode == 0  # a CPU run fits


def test_matrix_refuses_a_cuda_step_before_it_builds_anything(
    engine_without_gpu: None, tmp_path: Path
) -> None:
    run = run_cli(
        "matrix", "--backend", "docker", "--gpus", "", "--torch", "2.13.0",
        "--config", str(cuda_config(tmp_path)), "--out-dir", str(tmp_path / "out"),
        cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(run, 2, "cannot hand a container the GPU (no NVIDIA runtime)",
                          "step big (device: cuda)", "nvidia-ctk runtime configure",
                          "examples/workflows/pool.yml")  # fmt: skip
    assert not (tmp_path / "out").exists()


def test_the_action_says_it_in_one_line_before_measuring(
    engine_without_gpu: None, tmp_path: Path
) -> None:
    workspace = tmp_path / "checkout"
    cuda_config(workspace)
    (tmp_path / "runner-temp").mkdir()
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(EVENT))
    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo-org/trainer",
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "77",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "DOCKER_"))},
    }  # fmt: skip
    runner = Runner(
        workspace=workspace, runner_temp=tmp_path / "runner-temp", base_env=base_env,
        github={"event": EVENT, "event_name": "pull_request", "repository": "octo-org/trainer"},
        action_root=REPO_ROOT, timeout_s=900,
    )  # fmt: skip
    runner.run_action(
        {"torch": "2.13.0", "against": "none", "allow-missing-baseline": "true",
         "comment": "false", "backend": "docker", "gpus": ""}
    )  # fmt: skip
    shape = next(r for r in runner.records if r.name.startswith("Where am I"))
    assert shape.returncode == 2, shape.stdout + shape.stderr
    (command,) = workflow_commands(shape.stdout)
    assert command.startswith("::error title=compilegate::the Docker engine at ")
    assert (
        "step big (device: cuda)" in command and "never measures a GPU step on the CPU" in command
    )
    assert next(r for r in runner.records if r.name.startswith("Measure")).returncode is None
    assert next(r for r in runner.records if r.name.startswith("Fail the job")).returncode == 2
