"""publish() end to end: a real pull_request event, real HTTP to a local GitHub that checks
every exchange against GitHub's description, real GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import requests
from fake_github import EVENT_FILE, READ_ONLY_TOKEN, REPO, TOKEN, FakeGitHub, Reply

from compilegate.github import (
    ActionsContext,
    Annotation,
    PublishOutcome,
    comment_marker,
    make_client,
    publish,
)

EVENT = json.loads(EVENT_FILE.read_text())
PR = EVENT["number"]
HEAD_SHA = EVENT["pull_request"]["head"]["sha"]
MARKER = comment_marker("compilegate")


class NoSleep:
    def __init__(self) -> None:
        self.sleeps_s: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.sleeps_s.append(seconds)


def actions_env(tmp_path: Path, fake: FakeGitHub, *, token: str = TOKEN, event=EVENT) -> dict:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": fake.web_url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_SHA": "5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b",
        "GITHUB_RUN_ID": "8812",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step_summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "github_output"),
        "GITHUB_TOKEN": token,
    }


def publish_once(env: dict, markdown: str, sleep: NoSleep | None = None) -> PublishOutcome:
    context = ActionsContext.from_environ(env)
    session = requests.Session()
    session.trust_env = False  # no proxy: 127.0.0.1 only
    client = make_client(context, session, sleep=sleep or NoSleep())
    return publish(
        context,
        client,
        markdown=markdown,
        comment_key="compilegate",
        annotations=[
            Annotation("warning", "graph break: Tensor.item()", "train/step.py", 57, "Graph break")
        ],
        verdict="regression",
        report_path="compilegate-out/result.json",
        dry_run=False,
        stream=io.StringIO(),
    )


def read_outputs(path: Path) -> list[tuple[str, str]]:
    """Every (name, value) in a GITHUB_OUTPUT file, in order, as the runner parses it."""
    found = []
    lines = iter(path.read_text().split("\n"))
    for line in lines:
        if not line:
            continue
        name, delimiter = line.split("<<", 1)
        value = []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        found.append((name, "\n".join(value)))
    return found


def test_two_publishes_leave_one_comment_updated_in_place(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    for i in range(230):  # a busy PR: our comment will sit on page 3 of 3
        fake_github.add_comment(PR, f"review note {i}", login="reviewer")
    quoting = fake_github.add_comment(PR, f"> {MARKER}\nwhat is this marker?", login="alice")
    env = actions_env(tmp_path, fake_github)

    first = publish_once(env, "## compilegate: REGRESSION (exit 1)\nfirst run")
    second = publish_once(env, "## compilegate: REGRESSION (exit 1)\nsecond run")

    ours = [c for c in fake_github.comments_on(PR) if c["body"].startswith(MARKER)]
    assert len(ours) == 1
    assert ours[0]["body"] == f"{MARKER}\n## compilegate: REGRESSION (exit 1)\nsecond run"
    assert (first.comment.action, second.comment.action) == ("created", "updated")
    assert first.comment.id == second.comment.id == ours[0]["id"]
    assert second.comment_url == ours[0]["html_url"]
    quoted = next(c for c in fake_github.comments_on(PR) if c["id"] == quoting)
    assert quoted["body"] == f"> {MARKER}\nwhat is this marker?"

    api = [(s.method, s.path.split("?")[0], "&page=" in s.path) for s in fake_github.seen]
    comments = f"/api/v3/repos/{REPO}/issues/{PR}/comments"
    listing = [("GET", comments, False), ("GET", comments, True), ("GET", comments, True)]
    assert api == [
        *listing,
        ("POST", comments, False),
        *listing,
        ("PATCH", f"/api/v3/repos/{REPO}/issues/comments/{ours[0]['id']}", False),
    ]
    for seen in fake_github.seen:
        assert seen.headers["Authorization"] == f"Bearer {TOKEN}"
        assert seen.headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert seen.headers["Accept"] == "application/vnd.github+json"

    outputs = read_outputs(tmp_path / "github_output")
    assert (
        outputs
        == [
            ("verdict", "regression"),
            ("comment-url", ours[0]["html_url"]),
            ("report-path", "compilegate-out/result.json"),
        ]
        * 2
    )
    assert "name<<" not in (tmp_path / "github_output").read_text()  # heredoc form, 6 blocks
    assert (tmp_path / "github_output").read_text().count("<<ghadelimiter_") == 6
    summary = (tmp_path / "step_summary.md").read_text()
    assert summary.count("## compilegate: REGRESSION") == 2


def test_a_forks_read_only_token_leaves_the_report_in_the_summary(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    fork_event = json.loads(json.dumps(EVENT))
    fork_event["pull_request"]["head"]["repo"]["full_name"] = "alice/trainer"
    fake_github.open_pull_request(PR, HEAD_SHA, "alice/trainer")
    env = actions_env(tmp_path, fake_github, token=READ_ONLY_TOKEN, event=fork_event)

    outcome = publish_once(env, "## compilegate: PASS")

    assert not outcome.posted and outcome.verdict == "regression"
    assert "`workflow_run`" in outcome.message and "`compilegate publish`" in outcome.message
    assert fake_github.comments_on(PR) == []
    assert [s.method for s in fake_github.seen] == ["GET", "POST"]
    assert (tmp_path / "step_summary.md").read_text() == "## compilegate: PASS\n"
    assert ("comment-url", "") in read_outputs(tmp_path / "github_output")


def test_a_secondary_rate_limit_is_waited_out_over_real_http(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    limited = {"message": "You have exceeded a secondary rate limit.", "documentation_url": "x"}
    fake_github.inject("POST", r".*/comments", Reply(403, limited, {"retry-after": "12"}))
    sleep = NoSleep()

    outcome = publish_once(actions_env(tmp_path, fake_github), "## report", sleep)

    assert outcome.posted
    assert sleep.sleeps_s == [12.0]
    assert [s.method for s in fake_github.seen] == ["GET", "POST", "POST"]


def test_a_deleted_pull_request_is_reported_not_raised(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    outcome = publish_once(actions_env(tmp_path, fake_github), "## report")

    assert not outcome.posted
    assert "404" in outcome.message and "job summary" in outcome.message


def test_dry_run_sends_nothing(tmp_path: Path, fake_github: FakeGitHub) -> None:
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    context = ActionsContext.from_environ(actions_env(tmp_path, fake_github))
    stream = io.StringIO()

    outcome = publish(
        context,
        make_client(context),
        markdown="## report",
        comment_key="compilegate",
        annotations=[],
        verdict="pass",
        report_path="r.json",
        dry_run=True,
        stream=stream,
    )

    assert fake_github.seen == []
    assert not outcome.posted
    assert f"POST   /repos/{REPO}/issues/{PR}/comments" in stream.getvalue()


def test_a_baseline_artifact_is_found_and_downloaded_without_the_token(
    tmp_path: Path, fake_github: FakeGitHub
) -> None:
    archive = tmp_path / "baseline"
    archive.mkdir()
    (archive / "result.json").write_text('{"schema_version": 1}')
    data = Path(shutil.make_archive(str(tmp_path / "baseline"), "zip", archive)).read_bytes()
    wanted = fake_github.add_artifact("compilegate-result", data, head_branch="main")
    fake_github.add_artifact("compilegate-result", b"PK-other", head_branch="feature")
    fake_github.add_artifact("compilegate-result", b"PK-old", head_branch="main", expired=True)
    for i in range(3):
        fake_github.add_artifact(f"coverage-{i}", b"PK", head_branch="main")
    context = ActionsContext.from_environ(actions_env(tmp_path, fake_github))
    client = make_client(context, requests.Session(), sleep=NoSleep())

    found = list(
        client.list_repo_artifacts(REPO, name="compilegate-result", head_branch="main", per_page=1)
    )
    content = client.download_artifact_zip(REPO, found[0].id)

    assert [a.id for a in found] == [wanted]
    assert zipfile.ZipFile(io.BytesIO(content)).read("result.json") == b'{"schema_version": 1}'
    assert len(fake_github.blob_seen) == 1
    assert "Authorization" not in fake_github.blob_seen[0].headers
    listing = [s.path for s in fake_github.seen if s.path.split("?")[0].endswith("/artifacts")]
    assert len(listing) == 3  # three matching artifacts, one per page


def test_the_fake_github_flags_a_request_the_contract_rejects(fake_github: FakeGitHub) -> None:
    """Guard for the tests above: the local server is not a rubber stamp."""
    fake_github.open_pull_request(PR, HEAD_SHA, REPO)
    session = requests.Session()
    session.trust_env = False

    session.post(
        f"{fake_github.api_url}/repos/{REPO}/issues/{PR}/comments",
        json={"bdy": "typo"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    session.get(
        f"{fake_github.api_url}/repos/{REPO}/issues/{PR}/comments?per_page=many",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )

    assert len(fake_github.violations) == 2
    assert "'body' is a required property" in fake_github.violations[0]
    assert "per_page" in fake_github.violations[1]
    fake_github.violations.clear()  # seen; the fixture would fail the test otherwise
