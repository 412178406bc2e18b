"""Item 11 through the real CLI: the measuring child does not see the runner. A hostile step
(examples/test_steps/hostile_env.py) reports every variable it sees and tries to write into
the workflow's files: none of the runner's secrets reach it, only what it opted in."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import REPO_ROOT, run_cli, write_config

from compilegate.schemas import validation_errors

HOST_SECRETS = {
    "GITHUB_TOKEN": "ghs_secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "HF_TOKEN": "hf_secret",
    "SSH_AUTH_SOCK": "/tmp/agent.sock",
    "MY_API_TOKEN": "my-secret",
}


TRACKING_ID = "github_7f0e4c52-1d2b-4b8e-9d3a-5c6f7a8b9c0d"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("hostile")
    report = tmp / "seen.json"
    workflow = {name: tmp / name.lower() for name in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH")}
    for path in workflow.values():
        path.write_text("")
    host = {
        **HOST_SECRETS,
        **{name: str(path) for name, path in workflow.items()},
        "HF_HOME": str(tmp / "hf-home"),
        "COMPILEGATE_TEST_ENV_REPORT": str(report),
        "OMP_NUM_THREADS": "1",
        "TORCHDYNAMO_DISABLE": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(tmp / "host-inductor-cache"),
        "RUNNER_TRACKING_ID": TRACKING_ID,
        "RUNNER_TEMP": str(tmp),
    }
    config = write_config(
        tmp / "c.yml",
        "  - name: hostile\n    entry: examples/test_steps/hostile_env.py:make_step\n"
        "    env: [HF_HOME, COMPILEGATE_TEST_ENV_REPORT]\n" + QUICK,
    )
    run = run_cli(
        "run",
        "--config",
        str(config),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(tmp / "r.json"),
        env=host,
    )
    seen = json.loads(report.read_text()) if report.is_file() else None
    return run, seen, host, workflow


def test_a_hostile_step_sees_no_secret_and_runs(hostile_run) -> None:
    run, seen, _, _ = hostile_run
    assert run.returncode == 0, run.stderr
    assert run.result["steps"][0]["status"] == "ok", run.result["steps"][0]["error"]
    assert seen is not None, "the step could not report what it saw"
    leaked = sorted(set(seen) & {*HOST_SECRETS, "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH"})
    assert leaked == []
    assert not any(value in seen.values() for value in HOST_SECRETS.values())


def test_the_step_keeps_the_runners_tracking_id_and_no_other_runner_variable(hostile_run) -> None:
    """Issue 29 item 7: the runner's end-of-job cleanup kills the processes that carry its
    RUNNER_TRACKING_ID, so the child (and what it leaves behind) must keep it."""
    _, seen, _, _ = hostile_run
    assert seen["RUNNER_TRACKING_ID"] == TRACKING_ID
    assert [name for name in seen if name.startswith("RUNNER_")] == ["RUNNER_TRACKING_ID"]


def test_the_step_cannot_write_into_the_workflow(hostile_run) -> None:
    _, _, _, workflow = hostile_run
    assert all(path.read_text() == "" for path in workflow.values())


def test_an_opted_in_variable_reaches_the_step(hostile_run) -> None:
    _, seen, host, _ = hostile_run
    assert seen["HF_HOME"] == host["HF_HOME"]
    assert "PATH" in seen


def test_the_child_gets_a_fresh_home_and_compilegates_own_cache(hostile_run) -> None:
    _, seen, host, _ = hostile_run
    assert seen["HOME"] != os.environ.get("HOME")
    assert "compilegate-" in seen["HOME"]
    assert seen["TORCHINDUCTOR_CACHE_DIR"] != host["TORCHINDUCTOR_CACHE_DIR"]


def test_measurement_variables_are_stripped_and_recorded(hostile_run) -> None:
    run, seen, host, _ = hostile_run
    assert "OMP_NUM_THREADS" not in seen and "TORCHDYNAMO_DISABLE" not in seen
    recorded = run.result["environment"]["measurement_env"]
    assert recorded["OMP_NUM_THREADS"] == "1"
    assert recorded["TORCHDYNAMO_DISABLE"] == "1"
    assert recorded["TORCHINDUCTOR_CACHE_DIR"] == host["TORCHINDUCTOR_CACHE_DIR"]
    assert run.result["steps"][0]["settings"]["env"] == ["HF_HOME", "COMPILEGATE_TEST_ENV_REPORT"]
    assert validation_errors(run.result, "result") == []


def test_opting_in_a_secret_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "c.yml",
        "  - name: hostile\n    entry: examples/test_steps/hostile_env.py:make_step\n"
        "    env: [HF_HOME, GITHUB_TOKEN]\n" + QUICK,
    )
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json")
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1
    assert "c.yml:5: steps[0].env[1]: GITHUB_TOKEN is never passed" in run.stderr
    assert run.result is None


def test_stored_baseline_mode_gives_only_the_baselines_opt_ins(hostile_run, tmp_path: Path) -> None:
    """A pull request's config adds a host variable to its step's `env:`; the stored
    baseline (the default branch's run, which recorded the step's opt-ins) does not give it:
    the child never sees it, and the run's notes say so."""
    first, _, host, _ = hostile_run
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(first.result))  # recorded env: HF_HOME, the report
    config = write_config(
        tmp_path / "c.yml",
        "  - name: hostile\n    entry: examples/test_steps/hostile_env.py:make_step\n"
        "    env: [HF_HOME, COMPILEGATE_TEST_ENV_REPORT, TEAM_DEPLOY_SETTING]\n" + QUICK,
    )
    report = tmp_path / "seen.json"
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json"),
        "--baseline", str(baseline),
        env={**host, "COMPILEGATE_TEST_ENV_REPORT": str(report),
             "TEAM_DEPLOY_SETTING": "prod-db-hunter2"},
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stderr  # judged: the step ran
    seen = json.loads(report.read_text())
    assert "TEAM_DEPLOY_SETTING" not in seen and "prod-db-hunter2" not in seen.values()
    assert seen["HF_HOME"] == host["HF_HOME"], "what the baseline gives still reaches the step"
    assert "TEAM_DEPLOY_SETTING" in run.stderr and "not given" in run.stderr, run.stderr
    assert run.result["steps"][0]["settings"]["env"] == ["HF_HOME", "COMPILEGATE_TEST_ENV_REPORT"]
