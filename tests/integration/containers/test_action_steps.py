"""The composite action's steps, executed as a GitHub runner would run them
(tests/integration/actions_runner.py: each `run:` in bash with the step's `env:` resolved
from the inputs, fresh GITHUB_OUTPUT/GITHUB_ENV per step, one GITHUB_STEP_SUMMARY), against a
local GitHub that checks every request against GitHub's own API contract, and the real Docker
engine.

The `uses:` step (upload-artifact) is GitHub's own action and is not run here.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from actions_runner import Runner
from fake_github import FakeGitHub
from gate_docs import result

from repo_helpers import REPO_ROOT, TESTS, git

pytestmark = pytest.mark.docker

REPO = "octo-org/trainer"
TOKEN = "ghs_action-test-token"
EVENT = json.loads((TESTS / "integration/github/data/pull_request.synchronize.json").read_text())


def repository(tmp: Path) -> Path:
    """A small user repository: the tiny MLP and its compilegate.yml."""
    repo = tmp / "repo"
    (repo / "train").mkdir(parents=True)
    for name in ("tiny_mlp.py", "classification.py"):  # the step and the helper it imports
        shutil.copy(REPO_ROOT / "examples/test_steps" / name, repo / "train" / name)
    (repo / "compilegate.yml").write_text(
        "version: 1\nsteps:\n  - name: tiny\n    entry: train/tiny_mlp.py:make_step\n"
        "    device: cpu\n    variants: [{mode: default}]\n    warmup: 2\n    iterations: 6\n"
        "    rounds: 2\n    threads: 1\n    timeout_s: 600\n    numerics: {enabled: false}\n"
        "    variant_processes: 1\n"
    )
    return repo


def action_runner(
    tmp_path: Path, workspace: Path, event: dict, fake: FakeGitHub, summary: Path
) -> Runner:
    """The composite action's runner for `event`, against the local GitHub."""
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    base_env = {  # what a runner gives every step; GITHUB_TOKEN is not among them
        "PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8", "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.api_url, "GITHUB_SERVER_URL": fake.web_url,
        "GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_SHA": "5" * 40,
        "GITHUB_RUN_ID": "77", "GITHUB_STEP_SUMMARY": str(summary), "NO_PROXY": "127.0.0.1",
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "DOCKER_"))},
    }  # fmt: skip
    return Runner(
        workspace=workspace, runner_temp=runner_temp, base_env=base_env,
        github={"event": {**event, "repository": {"default_branch": "main"}},
                "repository": REPO, "token": TOKEN},
        action_root=REPO_ROOT,
    )  # fmt: skip


def zipped(document: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("baseline.json", json.dumps(document))
    return buffer.getvalue()


def test_the_composite_action_measures_publishes_and_fails_per_the_verdict(
    tmp_path: Path, local_torch_image: Any, base_image: str
) -> None:
    fake = FakeGitHub(REPO, token=TOKEN)
    try:
        pr, head_sha = EVENT["number"], EVENT["pull_request"]["head"]["sha"]
        fake.open_pull_request(pr, head_sha, REPO)
        # A baseline from another machine: the gate cannot judge against it and must say so.
        fake.add_artifact("compilegate-baseline", zipped(result()), head_branch="main")
        summary = tmp_path / "summary.md"
        runner = action_runner(tmp_path, repository(tmp_path), EVENT, fake, summary)
        outputs = runner.run_action(
            {"torch": "2.13.0", "backend": "docker", "gpus": "", "base-image": base_image,
             "baseline-artifact": "compilegate-baseline", "comment-key": "action-test",
             "github-token": TOKEN, "against": "none"}
        )  # fmt: skip
    finally:
        fake.close()
    by_name = {r.name.split(" (")[0]: r for r in runner.records}
    for name in ("Install compilegate", "Find the base"):
        assert by_name[name].returncode == 0, by_name[name].stderr[-3000:]
    measure = by_name["Measure"]
    assert "GITHUB_TOKEN" not in measure.env and TOKEN not in measure.env.values()
    measured = Path(measure.env["GITHUB_OUTPUT"]).read_text()
    assert "exit-code=4" in measured, measure.stdout[-3000:] + measure.stderr[-3000:]
    assert by_name["Publish"].returncode == 0
    assert outputs["verdict"] in ("incomparable", "removed", "missing")
    comments = fake.comments_on(pr)
    assert len(comments) == 1 and comments[0]["body"].startswith(
        "<!-- compilegate: action-test -->"
    )
    assert "| 2.13.0 |" in comments[0]["body"]
    assert outputs["comment-url"] == comments[0]["html_url"]
    assert "### ❌ compilegate fails" in summary.read_text()
    assert by_name["Upload the result documents"].skipped.startswith("uses:")
    final = by_name["Fail the job per the verdict"]
    assert final.returncode == 4 and "::error title=compilegate::" in final.stdout
    assert fake.violations == []


def test_a_pull_request_to_the_default_branch_is_measured_beside_its_base(
    tmp_path: Path, local_torch_image: Any, base_image: str
) -> None:
    """`against: auto`: the event's base commit is measured beside the head in the same job,
    no baseline artifact is fetched, and the comment says the comparison was paired."""
    repo = repository(tmp_path)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base_sha = git(repo, "rev-parse", "HEAD")
    (repo / "train" / "notes.md").write_text("a change that does not touch the step\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    event = json.loads(json.dumps(EVENT))
    event["pull_request"]["base"]["sha"] = base_sha
    event["pull_request"]["base"]["ref"] = "main"
    fake = FakeGitHub(REPO, token=TOKEN)
    try:
        pr = event["number"]
        fake.open_pull_request(pr, event["pull_request"]["head"]["sha"], REPO)
        runner = action_runner(tmp_path, repo, event, fake, tmp_path / "summary.md")
        outputs = runner.run_action(
            {"torch": "2.13.0", "backend": "docker", "gpus": "", "base-image": base_image,
             "baseline-artifact": "compilegate-baseline", "comment-key": "paired-test",
             "github-token": TOKEN}
        )  # fmt: skip
    finally:
        fake.close()
    by_name = {r.name.split(" (")[0]: r for r in runner.records}
    found = by_name["Find the base"]
    assert found.returncode == 0 and f"paired mode: measuring {base_sha}" in found.stdout
    measure = by_name["Measure"]
    results = Path(
        Path(measure.env["GITHUB_OUTPUT"]).read_text().split("results-dir=")[1].split()[0]
    )
    head = json.loads((results / "torch-2.13.0" / "result.json").read_text())
    base = json.loads((results / "torch-2.13.0" / "result.base.json").read_text())
    assert base["environment"]["commit"] == base_sha
    assert head["pairing"]["id"] == base["pairing"]["id"]
    assert outputs["verdict"] in ("pass", "inconclusive", "improvement", "regression")
    (comment,) = fake.comments_on(pr)
    assert "paired, 1 pair, same machine" in comment["body"]
    assert not [s for s in fake.seen if "artifacts" in s.path], "no baseline fetched"
    assert fake.violations == []


def test_a_pull_request_that_deletes_its_epoch_line_does_not_pass_a_stored_baseline(
    tmp_path: Path, local_torch_image: Any, base_image: str
) -> None:
    """Issue 29, finding 2, as the runner runs the action (`against: none`): the default
    branch's baseline ran the epoch's last batch (`epoch: {length: 100}`); the pull request
    makes that batch smaller (a recompile at every epoch end) and deletes the line. Before,
    each version's run measured no epoch end and the job passed ("recompiles 0 → 0")."""
    from cli_helpers import run_cli
    from test_epoch_policy import BASE_CODE, EPOCH_LINE, HEAD_CODE, STEP, checkout

    config = STEP.replace("    threads: 1\n", "    threads: 1\n    device: cpu\n")
    base = checkout(tmp_path / "base", BASE_CODE, config + EPOCH_LINE)
    recorded = run_cli(  # the baseline workflow's run on the default branch, on this machine
        "run", "--config", str(base / "compilegate.yml"), "--repo", str(base),
        "--out", str(tmp_path / "baseline.json"),
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr[-3000:]
    head = checkout(tmp_path / "repo", HEAD_CODE, config)  # the pull request's checkout
    fake = FakeGitHub(REPO, token=TOKEN)
    try:
        pr, head_sha = EVENT["number"], EVENT["pull_request"]["head"]["sha"]
        fake.open_pull_request(pr, head_sha, REPO)
        fake.add_artifact("compilegate-baseline", zipped(recorded.result), head_branch="main")
        runner = action_runner(tmp_path, head, EVENT, fake, tmp_path / "summary.md")
        outputs = runner.run_action(
            {"torch": "2.13.0", "backend": "docker", "gpus": "", "base-image": base_image,
             "baseline-artifact": "compilegate-baseline", "comment-key": "epoch-test",
             "github-token": TOKEN, "against": "none"}
        )  # fmt: skip
    finally:
        fake.close()
    by_name = {r.name.split(" (")[0]: r for r in runner.records}
    measure = by_name["Measure"]
    measured = Path(measure.env["GITHUB_OUTPUT"]).read_text()
    assert "exit-code=4" in measured, measure.stdout[-3000:] + measure.stderr[-3000:]
    assert outputs["verdict"] == "incomparable"
    (comment,) = fake.comments_on(pr)
    body = " ".join(comment["body"].replace("\\_", "_").split())  # markdown escapes `_`
    assert "not compared: the step's configuration changed: epoch_length 100 → None" in body
    assert by_name["Fail the job per the verdict"].returncode == 4
