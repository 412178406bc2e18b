"""`compilegate publish` as the action runs it: a real subprocess with the environment GitHub
gives a step, a real pull_request event file, result documents the matrix left, and real HTTP
to the local GitHub that checks every exchange against GitHub's contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_github import EVENT_FILE, REPO, TOKEN, FakeGitHub
from gate_docs import environment, result, site, step, variant

from repo_helpers import REPO_ROOT

EVENT = json.loads(EVENT_FILE.read_text())
PR, HEAD_SHA = EVENT["number"], EVENT["pull_request"]["head"]["sha"]


def write(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture
def run_set(tmp_path: Path) -> tuple[Path, Path]:
    """Two versions; 2.13.0 gained a graph break at train/model.py:21 and lost speed."""
    baseline = write(tmp_path / "baseline.json", result())
    results = tmp_path / "results"
    broken = variant(speedup=0.9, sites=[site("train/model.py", 21, "Tensor.item() call")])
    write(
        results / "torch-2.13.0" / "result.json",
        result(step(variants=[broken]), env=environment(torch="2.13.0")),
    )
    write(results / "torch-2.12.0" / "result.json", result(env=environment(torch="2.12.0")))
    return baseline, results


def publish_cli(
    tmp_path: Path,
    fake: FakeGitHub,
    *args: str,
    environ: dict[str, str] | None = None,
    command: str = "publish",
) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO_ROOT / "runner"),
        "NO_PROXY": "127.0.0.1",
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": fake.web_url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(EVENT_FILE),
        "GITHUB_SHA": "5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b",
        "GITHUB_RUN_ID": "8812",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_TOKEN": TOKEN,
        **(environ or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "compilegate", command, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_publish_posts_one_comment_summary_annotations_and_outputs(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path]
):
    baseline, results = run_set
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    args = ("--results-dir", str(results), "--baseline", str(baseline), "--comment-key", "gpu")
    first = publish_cli(tmp_path, fake_github, *args)
    second = publish_cli(tmp_path, fake_github, *args)

    assert first.returncode == second.returncode == 1, first.stdout + first.stderr
    comments = fake_github.comments_on(PR)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith("<!-- compilegate: gpu -->")
    assert "| 2.12.0 | train | pass |" in body and "| 2.13.0 | train | ❌\u00a0fails |" in body
    link = f"{fake_github.web_url}/{REPO}/blob/{HEAD_SHA}/train/model.py#L21"
    assert link in body
    assert "::error file=train/model.py,line=21,title=compilegate%3A new graph break::" in (
        first.stdout
    )
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("### ❌ compilegate fails") == 2
    output = (tmp_path / "output").read_text()
    assert "verdict<<" in output and "regression" in output
    assert (results / "report.md").read_text().startswith("### ❌ compilegate fails")


def workflow_run_event(tmp_path: Path, **run: object) -> dict[str, str]:
    """The environment of a fork-publish job triggered by a fork's measuring run."""
    payload = {
        "workflow_run": {
            "id": 9, "event": "pull_request", "conclusion": "success", "head_sha": HEAD_SHA,
            "head_branch": "new-topic", "head_repository": {"full_name": "mallory/trainer"},
            "repository": {"full_name": REPO}, "pull_requests": [],
            **run,
        }
    }  # fmt: skip
    path = tmp_path / "workflow_run.json"
    path.write_text(json.dumps(payload))
    return {"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(path)}


def test_fork_publish_finds_the_pull_request_by_head_sha_and_head_repository(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path]
):
    baseline, results = run_set
    fake_github.open_pull_request(PR, HEAD_SHA, "mallory/trainer")
    fake_github.open_pull_request(PR + 1, "f" * 40, "mallory/trainer")  # same branch, other head
    args = ("--results-dir", str(results), "--baseline", str(baseline), "--pr-from-workflow-run")
    done = publish_cli(tmp_path, fake_github, *args, environ=workflow_run_event(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(fake_github.comments_on(PR)) == 1 and fake_github.comments_on(PR + 1) == []
    assert any("/pulls?" in seen.path and "head=mallory" in seen.path for seen in fake_github.seen)


@pytest.mark.parametrize(
    ("run", "why"),
    [
        ({"event": "push"}, "started by push, not by a pull request"),
        ({"conclusion": "cancelled"}, "concluded cancelled"),
        ({"head_repository": {"full_name": "eve/trainer"}}, "0 open pull requests"),
        ({"head_sha": "e" * 40}, "0 open pull requests"),
    ],
)
def test_fork_publish_comments_on_no_pull_request_it_cannot_tie_to_the_run(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path], run: dict, why: str
):
    baseline, results = run_set
    fake_github.open_pull_request(PR, HEAD_SHA, "mallory/trainer")
    args = ("--results-dir", str(results), "--baseline", str(baseline), "--pr-from-workflow-run")
    done = publish_cli(tmp_path, fake_github, *args, environ=workflow_run_event(tmp_path, **run))
    assert done.returncode == 1, done.stdout + done.stderr  # the gate's code, comment or not
    assert "compilegate: no comment: " in done.stdout and why in done.stdout
    assert fake_github.comments_on(PR) == []


def test_a_forged_result_is_never_posted_as_markdown(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path]
):
    baseline, results = run_set
    forged = result(env=environment(torch="2.11.0"))
    forged["steps"][0]["variants"][0]["error"] = 7  # not what the schema allows
    forged["comment"] = "![pwn](http://evil.example/x.png)"
    write(results / "torch-2.11.0" / "result.json", forged)
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    done = publish_cli(
        tmp_path, fake_github, "--results-dir", str(results), "--baseline", str(baseline)
    )
    body = fake_github.comments_on(PR)[0]["body"]
    assert "| 2.11.0 | - | ❌\u00a0error |" in body and "not a valid compilegate result" in body
    assert "![pwn]" not in body and done.returncode == 1


def test_outside_a_pull_request_the_comment_is_skipped_and_said(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path]
):
    _, results = run_set
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "after": HEAD_SHA}))
    env_override = {
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(push),
        "GITHUB_SHA": HEAD_SHA,
        "GITHUB_SERVER_URL": fake_github.web_url,
    }
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "publish", "--results-dir", str(results)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO_ROOT / "runner"),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake_github.api_url,
            "GITHUB_TOKEN": TOKEN,
            **env_override,
        },
    )
    assert done.returncode == 0, done.stderr
    assert "no PR comment" in done.stdout and fake_github.seen == []


def zipped(tmp_path: Path, name: str, document: object) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, json.dumps(document))
    return buffer.getvalue()


def fetch_cli(fake: FakeGitHub, *args: str) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO_ROOT / "runner"),
        "NO_PROXY": "127.0.0.1",
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_TOKEN": TOKEN,
    }
    return subprocess.run(
        [sys.executable, "-m", "compilegate", "baseline", "fetch", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_baseline_fetch_takes_the_newest_main_artifact_and_verifies_it(
    tmp_path: Path, fake_github: FakeGitHub
):
    good = result(env=environment(torch="2.13.0"))
    fake_github.add_artifact(
        "compilegate-baseline", zipped(tmp_path, "baseline.json", good), head_branch="main"
    )
    fake_github.add_artifact(
        "compilegate-baseline", zipped(tmp_path, "baseline.json", {"x": 1}), head_branch="feature"
    )
    out = tmp_path / "baseline.json"
    done = fetch_cli(fake_github, "--artifact", "compilegate-baseline", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == good
    assert "push on main" in done.stdout


def test_baseline_fetch_never_takes_a_poisoned_artifact(tmp_path: Path, fake_github: FakeGitHub):
    """Every artifact named compilegate-baseline that a pull request (or anything but a good
    push/schedule/dispatch run of the baseline workflow on this repository's main) could have
    uploaded is newer than the trusted one, and every one of them is passed over."""
    trusted = result(env=environment(torch="2.13.0"))
    fake_github.add_artifact(
        "compilegate-baseline", zipped(tmp_path, "b.json", trusted), head_branch="main"
    )
    poisoned = result(env=environment(torch="9.9.9"))
    data = zipped(tmp_path, "b.json", poisoned)
    untrusted_runs = [
        # a fork's pull_request run, from a branch the fork named `main`
        fake_github.add_workflow_run(event="pull_request", head_repo="mallory/trainer"),
        # a same-repository pull_request run of a branch named main
        fake_github.add_workflow_run(event="pull_request"),
        fake_github.add_workflow_run(event="pull_request_target"),
        fake_github.add_workflow_run(event="workflow_run"),
        # a push run whose head repository is a fork (e.g. a deleted-and-recreated repo)
        fake_github.add_workflow_run(event="push", head_repo="mallory/trainer"),
        # the baseline workflow failed or was cancelled after uploading
        fake_github.add_workflow_run(conclusion="failure"),
        fake_github.add_workflow_run(conclusion="cancelled"),
        # another workflow's run on main
        fake_github.add_workflow_run("anything-else.yml"),
    ]
    for run_id in untrusted_runs:
        fake_github.add_artifact("compilegate-baseline", data, head_branch="main", run_id=run_id)
    out = tmp_path / "baseline.json"
    done = fetch_cli(fake_github, "--artifact", "compilegate-baseline", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == trusted


def test_baseline_fetch_without_a_trusted_baseline_exits_4_saying_how_to_make_one(
    tmp_path: Path, fake_github: FakeGitHub
):
    poisoned = zipped(tmp_path, "b.json", result())
    fork_run = fake_github.add_workflow_run(event="pull_request", head_repo="mallory/trainer")
    fake_github.add_artifact("compilegate-baseline", poisoned, head_branch="main", run_id=fork_run)
    out = tmp_path / "baseline.json"
    done = fetch_cli(fake_github, "--artifact", "compilegate-baseline", "--out", str(out))
    assert done.returncode == 4 and not out.exists()
    assert done.stderr.count("\n") == 1, done.stderr
    assert "run baseline-refresh.yml on main to record one" in done.stderr


def test_baseline_fetch_refuses_an_artifact_that_is_not_a_baseline(
    tmp_path: Path, fake_github: FakeGitHub
):
    fake_github.add_artifact(
        "compilegate-baseline", zipped(tmp_path, "baseline.json", {"x": 1}), head_branch="main"
    )
    out = tmp_path / "baseline.json"
    done = fetch_cli(fake_github, "--artifact", "compilegate-baseline", "--out", str(out))
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.count("\n") == 1 and "not a valid compilegate baseline" in done.stderr
    missing = fetch_cli(fake_github, "--artifact", "nope", "--out", str(out))
    assert missing.returncode == 4 and "unexpired artifact 'nope'" in missing.stderr


def forged_paired_run(results: Path) -> Path:
    """What a fork's run can upload: a result that regressed, and beside it a base document
    it wrote itself (a copy of its own result), which would judge it `pass`."""
    slow = result(step(variants=[variant(speedup=0.5)]), env=environment(torch="2.13.0"))
    write(results / "torch-2.13.0" / "result.json", slow)
    return write(results / "torch-2.13.0" / "result.base.json", slow)


def test_fork_publish_without_a_baseline_exits_4_and_never_reads_the_forks_base(
    tmp_path: Path, fake_github: FakeGitHub
):
    """fork-publish.yml when the baseline fetch failed: the results are a fork's artifact, so
    the base document beside them is the fork's too. Not judged (exit 4), nothing posted."""
    results = tmp_path / "results"
    forged = forged_paired_run(results)
    fake_github.open_pull_request(PR, HEAD_SHA, "mallory/trainer")
    args = ("--results-dir", str(results), "--pr-from-workflow-run")
    done = publish_cli(tmp_path, fake_github, *args, environ=workflow_run_event(tmp_path))
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "never read" in done.stderr, done.stderr
    assert fake_github.comments_on(PR) == [] and str(forged) not in done.stdout
    assert not (results / "report.json").exists()


def test_untrusted_results_are_judged_only_against_the_given_baseline(
    tmp_path: Path, fake_github: FakeGitHub, run_set: tuple[Path, Path]
):
    baseline, results = run_set
    write(results / "torch-2.13.0" / "result.base.json", result(env=environment(torch="2.13.0")))
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    args = ("--results-dir", str(results), "--untrusted-results", "--comment-key", "fork")
    alone = publish_cli(tmp_path, fake_github, *args)
    assert alone.returncode == 4 and fake_github.comments_on(PR) == [], alone.stderr
    judged = publish_cli(tmp_path, fake_github, *args, "--baseline", str(baseline))
    assert judged.returncode == 1, judged.stdout + judged.stderr  # the trusted baseline's verdict
    assert str(baseline) in json.loads((results / "report.json").read_text())["baseline"]
