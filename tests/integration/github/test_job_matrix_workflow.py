"""The shipped job-matrix.yml's merge job, run as the runner runs it
(tests/integration/actions_runner.py) against the local GitHub: the plan `compilegate plan`
printed, the artifacts of the legs that uploaded one, and one sticky comment in which every
planned leg is a row — one that failed shows its error, one that never ran says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from actions_runner import Runner
from fake_github import EVENT_FILE, REPO, TOKEN, FakeGitHub
from gate_docs import environment, result, step
from test_fork_publish_workflow import checkout_of_this_action

from compilegate.cli import main
from repo_helpers import REPO_ROOT

WORKFLOW = REPO_ROOT / "examples/workflows/job-matrix.yml"
EVENT = json.loads(EVENT_FILE.read_text())
PR, HEAD_SHA = EVENT["number"], EVENT["pull_request"]["head"]["sha"]
CONFIG = """\
version: 1
torch: ["2.12.0", "2.13.0"]
steps:
  - name: mlp
    entry: steps.py:make_mlp
  - name: ddp_mlp
    entry: steps.py:make_mlp
    distributed: {wrapper: ddp, world_size: 2}
"""


def the_plan(tmp_path: Path, capsys) -> str:
    """What the plan job's output holds: `compilegate plan`'s one line."""
    config = tmp_path / "compilegate.yml"
    config.write_text(CONFIG, encoding="utf-8")
    assert main(["plan", "--config", str(config)]) == 0
    return capsys.readouterr().out.strip()


def legs_artifacts(folder: Path) -> None:
    """Two legs measured (paired: the base beside each result), one failed before it wrote a
    result (the folder the leg's last step leaves); the fourth leg uploaded nothing."""
    for leg, torch in (("mlp-torch2.12.0-gpu1", "2.12.0"), ("mlp-torch2.13.0-gpu1", "2.13.0")):
        document = json.dumps(result(step(name="mlp"), env=environment(torch=torch)))
        (folder / leg).mkdir(parents=True)
        for name in ("result.json", "result.base.json"):
            (folder / leg / name).write_text(document, encoding="utf-8")
    failed = folder / "ddp_mlp-torch2.12.0-gpu2"
    failed.mkdir()
    (failed / "error.txt").write_text(
        "the leg's job failed before compilegate wrote a result: see the job's log\n"
    )


def test_the_merge_job_posts_one_comment_with_a_row_for_every_leg(
    tmp_path: Path, fake_github: FakeGitHub, capsys
):
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    plan = the_plan(tmp_path, capsys)
    workspace, runner_temp = tmp_path / "ws", tmp_path / "temp"
    workspace.mkdir()
    runner_temp.mkdir()
    downloaded: list[str] = []

    def checkout(step: dict, given: dict, runner: Runner) -> dict:
        assert given["repository"] == "compilegate/compilegate", "no pull-request code"
        checkout_of_this_action(workspace / given["path"])
        return {}

    def download(step: dict, given: dict, runner: Runner) -> dict:
        downloaded.append(given["pattern"])
        legs_artifacts(workspace / given["path"])
        return {}

    base_env = {
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(EVENT_FILE), "GITHUB_SHA": "5" * 40, "GITHUB_RUN_ID": "78",
        "GITHUB_API_URL": fake_github.api_url, "GITHUB_SERVER_URL": fake_github.web_url,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "NO_PROXY": "127.0.0.1",
        **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
    }  # fmt: skip
    runner = Runner(
        workspace=workspace, runner_temp=runner_temp, base_env=base_env,
        github={"event": EVENT, "event_name": "pull_request", "repository": REPO, "token": TOKEN},
        action_root=REPO_ROOT, needs={"plan": {"result": "success", "outputs": {"matrix": plan}}},
        stand_ins={"actions/checkout@": checkout, "actions/download-artifact@": download},
        timeout_s=600,
    )  # fmt: skip
    runner.run_job(yaml.safe_load(WORKFLOW.read_text()), "merge")

    merging = next(r for r in runner.records if r.name == "One comment from every leg")
    assert downloaded == ["compilegate-leg-*"]
    # Legs that failed or never ran fail the job: a run error, never a silent pass.
    assert merging.returncode == 3, merging.stdout + merging.stderr
    comments = fake_github.comments_on(PR)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert "<!-- compilegate: matrix -->" in body
    assert "the leg's job failed before compilegate wrote a result" in body  # ddp 2.12.0
    assert body.count("this leg never ran: no artifact from its job") >= 1  # ddp 2.13.0
    verdicts = json.loads((workspace / "results" / "report.json").read_text())
    rows = {v["label"]: v["overall"] for v in verdicts["versions"]}
    assert rows == {
        "mlp-torch2.12.0-gpu1": "pass",
        "mlp-torch2.13.0-gpu1": "pass",
        "ddp_mlp-torch2.12.0-gpu2": "error",
        "ddp_mlp-torch2.13.0-gpu2": "error",
    }
