"""publish(): the report always lands somewhere, and posting never changes the verdict."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from github_fakes import REPO, FakeCommentClient

from compilegate.github import (
    ActionsContext,
    Annotation,
    GitHubForbidden,
    GitHubRateLimited,
    GitHubTransportError,
    PublishOutcome,
    PullRequestRef,
    comment_marker,
    fit_comment,
    publish,
)
from compilegate.github.client import MAX_COMMENT_CHARS

MARKER = comment_marker("compilegate")


def context(tmp_path: Path, *, event: str = "pull_request", fork: bool = False) -> ActionsContext:
    pr = None
    if event in ("pull_request", "pull_request_target"):
        head = "someone/trainer" if fork else REPO
        pr = PullRequestRef(42, "a" * 40, head_repo=head, base_repo=REPO)
    return ActionsContext(
        repository=REPO,
        event_name=event,
        sha="c" * 40,
        api_url="https://api.example",
        server_url="https://git.example",
        step_summary_path=tmp_path / "summary.md",
        output_path=tmp_path / "output",
        run_id="99",
        pull_request=pr,
        token="ghs_x",
    )


def run(ctx: ActionsContext, client: Any, **overrides: Any) -> tuple[PublishOutcome, str]:
    stream = io.StringIO()
    options: dict[str, Any] = {
        "markdown": "## compilegate: PASS",
        "comment_key": "compilegate",
        "annotations": [],
        "verdict": "regression",
        "report_path": "out/result.json",
        "dry_run": False,
        "stream": stream,
    }
    options.update(overrides)
    outcome = publish(ctx, client, **options)
    return outcome, stream.getvalue()


def test_a_pull_request_gets_the_comment_summary_and_outputs(tmp_path: Path) -> None:
    client = FakeCommentClient()

    outcome, log = run(context(tmp_path), client)

    assert outcome.posted and outcome.comment is not None
    assert client.comments[0].body == f"{MARKER}\n## compilegate: PASS"
    assert (tmp_path / "summary.md").read_text() == "## compilegate: PASS\n"
    outputs = (tmp_path / "output").read_text()
    assert outcome.comment.url in outputs and "regression" in outputs
    assert f"compilegate publish: created comment {outcome.comment.url}" in log


def test_a_push_skips_the_comment_in_one_line_and_sends_nothing(tmp_path: Path) -> None:
    client = FakeCommentClient()

    outcome, log = run(context(tmp_path, event="push"), client)

    assert not outcome.posted
    assert client.calls == []
    assert outcome.message.startswith("no PR comment: this push event names no pull request")
    assert log.count("\n") == 1
    assert outcome.summary_written and outcome.outputs_written
    assert outcome.verdict == "regression"


def test_dry_run_prints_what_would_be_sent_and_sends_nothing(tmp_path: Path) -> None:
    client = FakeCommentClient()

    outcome, log = run(context(tmp_path), client, dry_run=True)

    assert client.calls == []
    assert not outcome.posted
    body_chars = len(f"{MARKER}\n## compilegate: PASS")
    assert f"GET    /repos/{REPO}/issues/42/comments?per_page=100" in log
    assert f"POST   /repos/{REPO}/issues/42/comments  body {body_chars} characters" in log
    assert f"PATCH  /repos/{REPO}/issues/comments/{{id}}  body {body_chars} characters" in log


def test_no_token_is_said_not_raised(tmp_path: Path) -> None:
    outcome, _ = run(context(tmp_path), None)
    assert not outcome.posted
    assert "no GitHub token" in outcome.message


def test_a_forks_read_only_token_explains_the_workflow_run_path(tmp_path: Path) -> None:
    client = FakeCommentClient(
        fail_with=GitHubForbidden(
            "GitHub answered POST ... with 403: Resource not accessible by integration",
            read_only_token=True,
            status=403,
        )
    )

    outcome, log = run(context(tmp_path, fork=True), client, verdict="pass")

    assert not outcome.posted
    assert outcome.verdict == "pass"
    assert "read-only token" in outcome.message
    assert "`compilegate publish`" in outcome.message and "`workflow_run`" in outcome.message
    assert outcome.summary_written
    assert "comment-url<<" in (tmp_path / "output").read_text()
    assert outcome.message in log


def test_a_read_only_token_on_the_base_repository_asks_for_permissions(tmp_path: Path) -> None:
    client = FakeCommentClient(
        fail_with=GitHubForbidden("403: Resource not accessible", read_only_token=True)
    )
    outcome, _ = run(context(tmp_path), client)
    assert "permissions: pull-requests: write" in outcome.message


@pytest.mark.parametrize(
    "error",
    [
        GitHubRateLimited("rate limited; waiting 3600 s would pass the cap", wait_s=3600),
        GitHubTransportError("POST /repos/... failed after 1 attempt(s): reset"),
    ],
)
def test_any_github_error_is_reported_not_raised(tmp_path: Path, error: Exception) -> None:
    outcome, _ = run(context(tmp_path), FakeCommentClient(fail_with=error))
    assert not outcome.posted
    assert str(error) in outcome.message
    assert outcome.verdict == "regression"


def test_annotations_are_printed_limited_and_counted(tmp_path: Path) -> None:
    notes = [Annotation("warning", f"break {i}", "m.py", i + 1) for i in range(12)]

    outcome, log = run(context(tmp_path), FakeCommentClient(), annotations=notes)

    assert log.count("::warning ") == 10
    assert (outcome.annotations_shown, outcome.annotations_dropped) == (10, 3)
    assert "3 annotation(s) beyond GitHub's per-step limit" in log


def test_a_summary_that_cannot_be_written_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.step_summary_path.mkdir()  # a directory where a file should be

    outcome, log = run(ctx, FakeCommentClient())

    assert outcome.posted and not outcome.summary_written
    assert "could not write the job summary" in outcome.problems[0]
    assert outcome.problems[0] in log


def test_an_oversized_report_is_cut_for_the_comment_but_whole_in_the_summary(
    tmp_path: Path,
) -> None:
    table = "".join(f"| step{i} | 1.00x |\n" for i in range(6000))
    markdown = f"## compilegate\n<details><summary>all rows</summary>\n\n```\n{table}"
    client = FakeCommentClient()

    outcome, _ = run(context(tmp_path), client, markdown=markdown)

    body = client.comments[0].body
    assert len(markdown) > MAX_COMMENT_CHARS >= len(body)
    assert outcome.comment_truncated
    assert body.startswith(f"{MARKER}\n## compilegate\n")
    assert "Truncated" in body and "out/result.json" in body
    assert (tmp_path / "summary.md").read_text() == markdown


def test_a_cut_comment_closes_its_code_block_and_details_before_the_footer() -> None:
    markdown = "intro\n<details>\n\n```\n" + "".join(f"line {i}\n" for i in range(200))

    text, truncated = fit_comment(markdown, limit_chars=1000, full_report_hint="See the summary.")

    assert truncated and len(text) <= 1000
    html = cmarkgfm.github_flavored_markdown_to_html(
        text, options=cmarkgfm.Options.CMARK_OPT_UNSAFE
    )
    footer_at = html.index("Truncated")
    assert html.rindex("</pre>") < footer_at  # the footer is not inside the code block
    assert html.rindex("</details>") < footer_at


def test_a_report_within_the_limit_is_left_as_it_is() -> None:
    assert fit_comment("short", limit_chars=10, full_report_hint="x") == ("short", False)
