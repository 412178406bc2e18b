"""The shipped fork-publish.yml, run as the runner runs it (tests/integration/actions_runner.py)
against the local GitHub: the artifact it downloads is the fork's, so when the default
branch's baseline cannot be fetched the job is not judged (exit 4) and nothing the fork
uploaded stands in for the baseline — not even a base document (`result.base.json`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml
from actions_runner import Runner
from fake_github import EVENT_FILE, REPO, TOKEN, FakeGitHub
from gate_docs import environment, result, step, variant

from repo_helpers import REPO_ROOT

WORKFLOW = REPO_ROOT / "examples/workflows/fork-publish.yml"
PR = json.loads(EVENT_FILE.read_text())["number"]
HEAD_SHA = "c0ffee" + "0" * 34


def checkout_of_this_action(destination: Path) -> None:
    """actions/checkout of compilegate itself: its tracked files as they are here."""
    listed = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "-z"], capture_output=True, check=True
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def forks_artifact(folder: Path) -> None:
    """A result that regressed, and the base document the fork wrote beside it to pass."""
    slow = result(step(variants=[variant(speedup=0.5)]), env=environment(torch="2.13.0"))
    for name in ("result.json", "result.base.json"):
        (folder / "torch-2.13.0").mkdir(parents=True, exist_ok=True)
        (folder / "torch-2.13.0" / name).write_text(json.dumps(slow))


def test_a_failed_baseline_fetch_is_exit_4_never_the_forks_own_base(
    tmp_path: Path, fake_github: FakeGitHub
):
    fake_github.open_pull_request(PR, HEAD_SHA, "mallory/trainer")  # no baseline run at all
    workspace, runner_temp = tmp_path / "ws", tmp_path / "temp"
    workspace.mkdir()
    runner_temp.mkdir()
    event = {
        "workflow_run": {
            "id": 9, "event": "pull_request", "conclusion": "success", "head_sha": HEAD_SHA,
            "head_branch": "new-topic", "head_repository": {"full_name": "mallory/trainer"},
            "repository": {"full_name": REPO}, "pull_requests": [],
        }
    }  # fmt: skip
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))

    def checkout(step: dict, given: dict, runner: Runner) -> dict:
        checkout_of_this_action(workspace / given["path"])
        return {}

    def download(step: dict, given: dict, runner: Runner) -> dict:
        forks_artifact(workspace / given["path"])
        return {}

    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "workflow_run",
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "78",
        "GITHUB_API_URL": fake_github.api_url, "GITHUB_SERVER_URL": fake_github.web_url,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "NO_PROXY": "127.0.0.1",
        **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
    }  # fmt: skip
    runner = Runner(
        workspace=workspace, runner_temp=runner_temp, base_env=base_env,
        github={"event": event, "event_name": "workflow_run", "repository": REPO, "token": TOKEN},
        action_root=REPO_ROOT, secrets={"GITHUB_TOKEN": TOKEN},
        stand_ins={"actions/checkout@": checkout, "actions/download-artifact@": download},
        timeout_s=600,
    )  # fmt: skip
    runner.run_job(yaml.safe_load(WORKFLOW.read_text()), "publish")

    posting = next(r for r in runner.records if r.name == "Validate, render and post")
    assert posting.returncode == 4, posting.stdout + posting.stderr
    assert "no baseline" in posting.stdout + posting.stderr
    assert fake_github.comments_on(PR) == [], "judged against the fork's own base"
    assert not (workspace / "results" / "report.json").exists()


def test_a_maintainers_label_is_recorded_at_the_commit_labelled(
    tmp_path: Path, fake_github: FakeGitHub
):
    """fork-publish.yml's pull_request_target job on `labeled` (issue 38, finding 3): the
    labelling recorded on the pull request at the labelled head, for the workflow_run job."""
    import zipfile
    from io import BytesIO

    from compilegate.github.acceptance_record import AcceptanceRecord

    fake_github.open_pull_request(
        PR, HEAD_SHA, "mallory/trainer", labels=("compilegate: accept",), author="mallory"
    )
    baseline = BytesIO()
    with zipfile.ZipFile(baseline, "w") as archive:
        archive.writestr("baseline.json", json.dumps(result()))
    fake_github.add_artifact("compilegate-baseline", baseline.getvalue(), head_branch="main")
    event = json.loads(EVENT_FILE.read_text())
    event.update(action="labeled", number=PR)
    event["label"] = {"id": 7, "name": "compilegate: accept", "color": "0e8a16", "default": False}
    event["sender"] = dict(event["sender"], login="maintainer", type="User")
    event["pull_request"].update(number=PR)
    event["pull_request"]["user"] = dict(event["pull_request"]["user"], login="mallory")
    event["pull_request"]["head"]["sha"] = HEAD_SHA
    event["pull_request"]["head"]["repo"]["full_name"] = "mallory/trainer"
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    workspace, runner_temp = tmp_path / "ws", tmp_path / "temp"
    workspace.mkdir()
    runner_temp.mkdir()

    def checkout(step: dict, given: dict, runner: Runner) -> dict:
        checkout_of_this_action(workspace / given["path"])
        return {}

    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "79", "GITHUB_API_URL": fake_github.api_url,
        "GITHUB_SERVER_URL": fake_github.web_url, "NO_PROXY": "127.0.0.1",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
    }  # fmt: skip
    runner = Runner(
        workspace=workspace, runner_temp=runner_temp, base_env=base_env,
        github={"event": event, "event_name": "pull_request_target", "repository": REPO,
                "token": TOKEN},
        action_root=REPO_ROOT, secrets={"GITHUB_TOKEN": TOKEN},
        stand_ins={"actions/checkout@": checkout}, timeout_s=600,
    )  # fmt: skip
    workflow = yaml.safe_load(WORKFLOW.read_text())
    contexts = runner._contexts(inputs={})
    for job, runs in (("record-acceptance", True), ("publish", False)):
        assert bool(runner.evaluate(str(workflow["jobs"][job]["if"]), contexts, {})) is runs, job
    runner.run_job(workflow, "record-acceptance")

    recording = next(r for r in runner.records if r.name == "Record the acceptance")
    assert recording.returncode == 0, recording.stdout + recording.stderr
    (comment,) = fake_github.comments_on(PR)
    record = AcceptanceRecord.from_body(comment["body"])
    assert record == AcceptanceRecord(HEAD_SHA, "compilegate: accept", "maintainer")
