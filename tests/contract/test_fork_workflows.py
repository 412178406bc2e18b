"""The fork-safe pair (examples/workflows/fork-measure.yml + fork-publish.yml) as GitHub would
trigger it (issue 29, finding 6).

`workflow_run: workflows: [compilegate-fork-measure]` matches a workflow by *name*, and on
`pull_request` GitHub runs the pull request's own workflow files: a fork can add a workflow
named compilegate-fork-measure under another file name (no approval environment, any job)
and, before the fix, fork-publish.yml took its run for the measuring one. The publish job's
`if:` now names the measuring workflow's path; it is evaluated here with the expression
evaluator of tests/integration/actions_runner.py over `workflow_run` events shaped like
GitHub's (https://docs.github.com/webhooks/webhook-events-and-payloads#workflow_run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from actions_runner import Runner

from repo_helpers import REPO_ROOT

MEASURE = REPO_ROOT / "examples/workflows/fork-measure.yml"
PUBLISH = REPO_ROOT / "examples/workflows/fork-publish.yml"
REPO = "octo-org/trainer"
# Where docs/action.md tells users to save part 1: .github/workflows/ under its own file name.
MEASURE_PATH = f".github/workflows/{MEASURE.name}"


def publish_runs(workflow_run: dict[str, Any]) -> bool:
    """Whether fork-publish.yml's publish job runs for a `workflow_run` event of this run."""
    document = yaml.safe_load(PUBLISH.read_text())
    condition = str(document["jobs"]["publish"]["if"])
    github = {
        "event_name": "workflow_run",
        "repository": REPO,
        "event": {"action": "completed", "workflow_run": workflow_run},
    }
    runner = Runner(
        workspace=Path("/nonexistent"), runner_temp=Path("/nonexistent"), base_env={},
        github=github, action_root=REPO_ROOT,
    )  # fmt: skip
    contexts = runner._contexts(inputs={})
    return bool(runner.evaluate(condition, contexts, {"failed": False}))


def measuring_run(**changes: Any) -> dict[str, Any]:
    """The run of part 1 for a fork's pull request, as the event carries it."""
    run: dict[str, Any] = {
        "id": 9,
        "name": "compilegate-fork-measure",
        "path": MEASURE_PATH,
        "workflow_id": 161335,
        "event": "pull_request",
        "status": "completed",
        "conclusion": "success",
        "head_branch": "new-topic",
        "head_sha": "c0ffee" + "0" * 34,
        "head_repository": {"full_name": "mallory/trainer"},
        "repository": {"full_name": REPO},
    }
    run.update(changes)
    return run


def test_the_pair_agrees_on_the_measuring_workflows_name() -> None:
    measure = yaml.safe_load(MEASURE.read_text())
    publish = yaml.safe_load(PUBLISH.read_text())
    trigger = publish[True]["workflow_run"]  # YAML 1.1 reads the key `on` as True
    assert trigger["workflows"] == [measure["name"]] and trigger["types"] == ["completed"]


def test_publish_runs_after_the_measuring_workflow_at_its_path() -> None:
    assert publish_runs(measuring_run())


@pytest.mark.parametrize(
    "changes",
    [
        # the same name, another file: a workflow the pull request added
        {"path": ".github/workflows/innocent-looking.yml", "workflow_id": 999},
        {"path": f".github/workflows/sub/{MEASURE.name}"},
        {"path": ""},  # no path at all
        # not a fork's pull request run, or not finished
        {"event": "pull_request_target"},
        {"event": "push"},
        {"conclusion": "failure"},
        {"head_repository": {"full_name": REPO}},
    ],
    ids=["another-file", "another-folder", "no-path", "pull-request-target", "push",
         "failed", "same-repository"],
)  # fmt: skip
def test_publish_skips_any_other_run(changes: dict[str, Any]) -> None:
    assert not publish_runs(measuring_run(**changes))
