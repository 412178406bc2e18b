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
from fake_github import FakeGitHub

from conftest import EVENT_FILE, REPO, TOKEN

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit"))
from gate_docs import environment, result, site, step, variant

REPO_ROOT = Path(__file__).resolve().parents[3]
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


def publish_cli(tmp_path: Path, fake: FakeGitHub, *args: str) -> subprocess.CompletedProcess:
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
    }
    return subprocess.run(
        [sys.executable, "-m", "compilegate", "publish", *args],
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
    assert "| 2.12.0 | train | pass |" in body and "| 2.13.0 | train | ❌ fails |" in body
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
    assert "| 2.11.0 | - | ❌ error |" in body and "not a valid compilegate result" in body
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
    done = fetch_cli(
        fake_github, "--artifact", "compilegate-baseline", "--branch", "main", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text()) == good


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
    assert missing.returncode == 2 and "no unexpired artifact named 'nope'" in missing.stderr
