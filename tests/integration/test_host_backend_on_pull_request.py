"""Issue 38, finding 5: the action refuses a host backend on a pull request unless the workflow
opts in with `allow-pull-request-code-on-host: true` (issue 51, finding 12: on every event but
push, schedule and workflow_dispatch).

With `backend: venv` the pull request's code runs on the runner host, outside a container: the
reproduced child walked up its parents, found GITHUB_ENV in /proc/<pid>/environ and appended
`LD_PRELOAD=…` for every later step (the token's included). docs/security.md called that mode
trusted-only; now action.yml enforces it. The action's steps run as a runner runs them
(tests/integration/actions_runner.py) with a real pull_request event payload: refused before
anything is installed (one `::error` line, the job fails with the usage exit 2), let through
with the opt-in, and the docker backend goes on as before (it reaches compilegate, which here
finds no engine: the container is not what is tested).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from actions_runner import Runner, workflow_commands

from repo_helpers import REPO_ROOT, TESTS

REPO = "octo-org/trainer"
EVENT = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json").read_text())
REFUSAL_STEP = "Refuse a host backend on pull requests (unless opted in)"


def run_action(tmp_path: Path, event_name: str, inputs: dict[str, str]) -> Runner:
    """The composite action on `event_name`, against a checkout without compilegate.yml (with
    the backend let through, compilegate starts and stops at once)."""
    workspace = tmp_path / "checkout"
    workspace.mkdir()
    (tmp_path / "runner-temp").mkdir()
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(EVENT))
    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "77",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock",
        **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
    }  # fmt: skip
    runner = Runner(
        workspace=workspace, runner_temp=tmp_path / "runner-temp", base_env=base_env,
        github={"event": EVENT, "event_name": event_name, "repository": REPO},
        action_root=REPO_ROOT, timeout_s=900,
    )  # fmt: skip
    runner.run_action(
        {"torch": "2.13.0", "against": "none", "allow-missing-baseline": "true",
         "comment": "false", **inputs}
    )  # fmt: skip
    return runner


def record(runner: Runner, prefix: str):
    return next(r for r in runner.records if r.name.startswith(prefix))


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_venv_on_a_pull_request_is_refused_before_anything_runs(
    tmp_path: Path, event_name: str
) -> None:
    runner = run_action(tmp_path, event_name, {"backend": "venv"})
    ran = [r.name for r in runner.records if r.returncode is not None]
    assert ran == [REFUSAL_STEP, "Fail the job per the verdict"], ran  # nothing installed
    assert not (tmp_path / "runner-temp" / "compilegate-venv").exists()
    refusal = record(runner, REFUSAL_STEP)
    assert refusal.returncode == 2, refusal.stdout + refusal.stderr
    commands = workflow_commands(refusal.stdout)
    assert len(commands) == 1 and commands[0].startswith("::error title=compilegate::")
    assert "allow-pull-request-code-on-host: true" in commands[0] and event_name in commands[0]
    verdict = record(runner, "Fail the job")
    assert verdict.returncode == 2, verdict.stdout + verdict.stderr


@pytest.mark.parametrize("event_name", ["issue_comment", "workflow_run", "merge_group"])
def test_venv_on_any_event_but_the_default_branchs_own_is_refused(
    tmp_path: Path, event_name: str
) -> None:
    """Issue 51, finding 12: the refusal named four pull_request* events, so issue_comment,
    workflow_run and merge_group (common ways a pull request's code gets run) passed. Only
    push, schedule and workflow_dispatch let the host backend through without the opt-in."""
    runner = run_action(tmp_path, event_name, {"backend": "venv"})
    ran = [r.name for r in runner.records if r.returncode is not None]
    assert ran == [REFUSAL_STEP, "Fail the job per the verdict"], ran  # nothing installed
    refusal = record(runner, REFUSAL_STEP)
    assert refusal.returncode == 2, refusal.stdout + refusal.stderr
    (command,) = workflow_commands(refusal.stdout)
    assert f"on a {event_name} event" in command
    assert "only push, schedule and workflow_dispatch allow it" in command
    assert record(runner, "Fail the job").returncode == 2


def test_venv_on_a_pull_request_runs_with_the_opt_in(tmp_path: Path) -> None:
    runner = run_action(
        tmp_path, "pull_request", {"backend": "venv", "allow-pull-request-code-on-host": "true"}
    )
    assert record(runner, REFUSAL_STEP).returncode == 0
    measure = record(runner, "Measure")
    assert measure.returncode == 0 and measure.env["INPUT_BACKEND"] == "venv"
    assert "compilegate.yml" in measure.stderr, measure.stderr[-2000:]  # compilegate ran


def test_venv_off_a_pull_request_is_unaffected(tmp_path: Path) -> None:
    runner = run_action(tmp_path, "push", {"backend": "venv"})
    refusal = record(runner, REFUSAL_STEP)
    assert refusal.returncode == 0 and workflow_commands(refusal.stdout) == []
    measure = record(runner, "Measure")
    assert measure.returncode == 0 and measure.env["INPUT_BACKEND"] == "venv"
    assert "compilegate.yml" in measure.stderr, measure.stderr[-2000:]  # compilegate ran


def test_docker_on_a_runner_with_no_engine_says_so_in_one_line_before_measuring(
    tmp_path: Path,
) -> None:
    """Issue 52, item 2: the docker backend is not refused on a pull request, and on a runner
    with no Docker engine (DOCKER_HOST names a missing socket, as in a pool's job container)
    the action says so in one `::error` line before its first Docker call; the measuring
    step never runs and the job fails with the usage exit 2."""
    runner = run_action(tmp_path, "pull_request", {"backend": "docker"})
    refusal = record(runner, REFUSAL_STEP)
    assert refusal.returncode == 0 and workflow_commands(refusal.stdout) == []
    shape = record(runner, "Where am I")
    assert shape.returncode == 2, shape.stdout + shape.stderr
    (command,) = workflow_commands(shape.stdout)
    assert command.startswith("::error title=compilegate::no Docker engine at unix://")
    assert "no-docker.sock (no such socket)" in command and "Traceback" not in shape.stderr
    assert record(runner, "Measure").returncode is None  # not run
    assert record(runner, "Fail the job").returncode == 2
