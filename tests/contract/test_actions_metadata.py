"""action.yml and every workflow we ship, held to SchemaStore's schemas (check-jsonschema's
built-in copies), zizmor's security audits, and our own rules: full-SHA pins, the token only
in the publishing step."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repo_helpers import REPO_ROOT

ACTION = REPO_ROOT / "action.yml"
WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
    (REPO_ROOT / "examples" / "workflows").glob("*.yml")
)
FULL_SHA = re.compile(r"^[^@\s]+@[0-9a-f]{40}$")


def tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed: `pip install -e .[test]` installs it")
    return found


def test_there_are_workflows_to_check():
    names = {path.name for path in WORKFLOWS}
    assert {"ci.yml", "gpu.yml", "pr-gate.yml", "fork-publish.yml"} <= names


def test_action_matches_schemastore_schema():
    done = subprocess.run(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ACTION)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_workflow_matches_schemastore_schema(workflow: Path):
    done = subprocess.run(
        [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_at_medium_or_above():
    done = subprocess.run(
        [tool("zizmor"), "--offline", "--min-severity", "medium", str(ACTION)]
        + [str(p) for p in WORKFLOWS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def uses_of(document: object) -> list[str]:
    if isinstance(document, dict):
        found = [document["uses"]] if isinstance(document.get("uses"), str) else []
        return found + [u for value in document.values() for u in uses_of(value)]
    if isinstance(document, list):
        return [u for value in document for u in uses_of(value)]
    return []


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_every_uses_is_pinned_to_a_full_commit_sha(path: Path):
    for uses in uses_of(yaml.safe_load(path.read_text())):
        assert uses.startswith("./") or FULL_SHA.match(uses.split(" ")[0]), f"{path.name}: {uses}"


def test_the_token_never_reaches_the_step_that_runs_pull_request_code():
    """Only the baseline fetch (compilegate's own code, before measuring) and the publishing
    step see it; the measuring step, which imports the pull request's code, does not."""
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    with_token = [
        step.get("id") or step.get("name")
        for step in steps
        if "github-token" in str(step.get("env", {})) or "token" in str(step.get("with", {}))
    ]
    assert with_token == ["baseline", "publish"]
    measure = next(step for step in steps if step.get("id") == "measure")
    assert "token" not in measure["run"].lower() and "secrets." not in str(measure)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_checkouts_do_not_persist_credentials(path: Path):
    document = yaml.safe_load(path.read_text())
    for job in document["jobs"].values():
        for step in job.get("steps", []):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, path.name


@pytest.mark.parametrize(
    ("measure_exit", "published", "job_exit"),
    [
        ("1", "accepted", 0),  # a regression a maintainer's label accepted
        ("1", "regression", 1),
        ("1", "", 1),  # publish did not run or wrote nothing
        ("3", "accepted", 3),  # a failed run is never lowered
        ("4", "accepted", 4),  # nor one that could not be judged
        ("0", "pass", 0),
    ],
)
def test_the_last_step_passes_a_regression_only_when_publish_accepted_it(
    measure_exit: str, published: str, job_exit: int
) -> None:
    """The verdict step's own script, run with the outputs it reads (issue 31)."""
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    (last,) = [s for s in steps if s.get("name") == "Fail the job per the verdict"]
    env = {
        "PATH": "/usr/bin:/bin",
        "MEASURE_EXIT": measure_exit,
        "BASE_OUTCOME": "success",
        "BASELINE_OUTCOME": "success",
        "PUBLISHED_VERDICT": published,
    }
    done = subprocess.run(["bash", "-c", last["run"]], env=env, capture_output=True, text=True)
    assert done.returncode == job_exit, done.stdout
    assert last["env"]["PUBLISHED_VERDICT"] == "${{ steps.publish.outputs.verdict }}"


def test_every_action_input_is_documented():
    """docs/action.md names every input action.yml declares (issue 38 added
    allow-pull-request-code-on-host: an opt-in nobody can find is one nobody weighs)."""
    documented = (REPO_ROOT / "docs" / "action.md").read_text()
    inputs = yaml.safe_load(ACTION.read_text())["inputs"]
    assert [name for name in inputs if f"`{name}`" not in documented] == []
