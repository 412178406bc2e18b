"""Finding 3 of issue 29 through the real CLI: what compilegate prints on the runner carries no
workflow command a pull request wrote. A hostile step (examples/test_steps/workflow_commands.py)
writes `::add-mask::`, `::stop-commands::`, annotations, groups and the legacy `##[` form to
its stdout and stderr, copies the child's progress prefix, and fails with the same commands in
its exception message; `compilegate run` runs it with GITHUB_ACTIONS=true, and the runner's own
command grammar (actions_runner.workflow_commands) finds none in what compilegate printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from actions_runner import workflow_commands
from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import REPO_ROOT, run_cli, write_config

STEPS = "examples/test_steps/workflow_commands.py"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("workflow-commands")
    config = write_config(
        tmp / "c.yml",
        f"  - name: shouting\n    entry: {STEPS}:make_step\n"
        + QUICK
        + f"  - name: failing\n    entry: {STEPS}:make_failing_step\n"
        + QUICK,
    )
    run = run_cli(
        "run",
        "--config",
        str(config),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(tmp / "r.json"),
        "--verbose",
        env={"GITHUB_ACTIONS": "true", "CI": "true"},
    )
    run.out_dir = tmp  # type: ignore[attr-defined]
    return run


def test_a_hostile_step_runs_and_fails_as_it_should(hostile_run) -> None:
    steps = {s["name"]: s for s in hostile_run.result["steps"]}
    assert steps["shouting"]["status"] == "ok", steps["shouting"]["error"]
    assert steps["failing"]["status"] == "error"
    assert "add-mask::REGRESSION" in steps["failing"]["error"]  # the result keeps the text


def test_no_workflow_command_reaches_the_runner(hostile_run) -> None:
    found = workflow_commands(hostile_run.stdout) + workflow_commands(hostile_run.stderr)
    assert found == []


def test_the_forged_text_is_still_shown(hostile_run) -> None:
    """Defused, not hidden: the reader of the log sees what the step wrote."""
    printed = hostile_run.stdout + hostile_run.stderr
    assert "add-mask::REGRESSION" in printed
    assert "forged annotation" in printed


def test_forged_progress_lines_are_not_shown_as_progress(hostile_run) -> None:
    """The child's progress channel carries a per-run nonce the step's stderr does not have:
    a copied prefix is the step's output (behind `|`), never a progress line of our own."""
    progress = [
        line for line in hostile_run.stderr.splitlines() if line.startswith("  ") and
        "REGRESSION" in line and not line.lstrip().startswith("|")
    ]  # fmt: skip
    assert progress == []


def test_publish_prints_its_own_annotations_and_no_other_command(hostile_run) -> None:
    """The result the step's run wrote, given a graph break whose reason and file carry
    commands (a container's result is hostile input): `compilegate publish` in Actions prints
    its annotation, escaped and whole, and nothing else a pull request wrote is a command."""
    tmp: Path = hostile_run.out_dir
    document = json.loads((tmp / "r.json").read_text())
    variant = next(s for s in document["steps"] if s["name"] == "shouting")["variants"][0]
    reason = "::add-mask::REGRESSION\r\n::group::forged ##[error]x"
    variant["graph_breaks"] = {
        "count": 1,
        "sites": [{"file": f"{STEPS}\n::add-mask::F", "line": 40, "reason": reason, "count": 1}],
    }
    result = tmp / "forged" / "result.json"
    result.parent.mkdir()
    result.write_text(json.dumps(document))
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "acme/trainer",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_SHA": "c" * 40,
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
    }
    done = run_cli("publish", "--result", str(result), "--no-comment", env=github)

    found = workflow_commands(done.stdout) + workflow_commands(done.stderr)
    assert len(found) == 1 and found[0].startswith("::warning file="), done.stdout + done.stderr
    assert "::add-mask::REGRESSION%0D%0A::group::forged" in found[0]  # data, escaped
