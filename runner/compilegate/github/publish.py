"""Put a finished report where a GitHub user sees it: job summary, annotations, PR comment,
step outputs.

`publish` never decides anything and never fails the job: the verdict was made before it,
from the result documents, and passes through untouched. Every GitHub error (a fork's
read-only token, a deleted PR, a rate limit, an outage) ends up in `PublishOutcome.message`,
and the report is still in the job summary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import requests

from ..report.workflow_annotation import Annotation
from ..run.workflow_log import write_command
from .actions_env import ActionsContext, append_step_summary, limit_annotations, write_outputs
from .client import MAX_COMMENT_CHARS, GitHubClient
from .errors import GitHubError, GitHubForbidden
from .sticky_comment import CommentOutcome, comment_marker, upsert_sticky_comment


@dataclass(frozen=True)
class PublishOutcome:
    """What reached GitHub. `posted` is about the PR comment only."""

    posted: bool
    message: str
    """One line for the job log: what happened to the comment, and why when it failed."""
    verdict: str
    comment: CommentOutcome | None = None
    summary_written: bool = False
    outputs_written: bool = False
    annotations_shown: int = 0
    annotations_dropped: int = 0
    comment_truncated: bool = False
    problems: tuple[str, ...] = ()
    """Local files that could not be written (summary, outputs): reported, never raised."""

    @property
    def comment_url(self) -> str | None:
        return None if self.comment is None else self.comment.url


def make_client(
    context: ActionsContext, session: requests.Session | None = None, **options: Any
) -> GitHubClient | None:
    """A client for the run's API URL and token, or None when there is no token."""
    if context.token is None:
        return None
    return GitHubClient(session or requests.Session(), context.api_url, context.token, **options)


def fit_comment(markdown: str, *, limit_chars: int, full_report_hint: str) -> tuple[str, bool]:
    """`markdown` cut at a line to fit `limit_chars`, with a footer saying where the rest is.

    An open code fence or `<details>` block is closed first, so the footer renders as
    text below the report rather than inside a code block. (The renderer keeps its own
    output under the limit; this is the safety net.)
    """
    if len(markdown) <= limit_chars:
        return markdown, False
    footer = (
        "\n\n---\n:warning: **Truncated**: GitHub limits a comment to "
        f"{MAX_COMMENT_CHARS:,} characters. {full_report_hint}\n"
    )
    # Worst case the closers add one fence and every open <details>; keep room for them.
    head = markdown[: max(0, limit_chars - len(footer) - 200)]
    head = head[: head.rfind("\n") + 1] if "\n" in head else ""
    closers = ""
    if sum(1 for line in head.splitlines() if line.lstrip().startswith("```")) % 2:
        closers += "```\n"
    open_details = head.count("<details") - head.count("</details>")
    closers += "</details>\n" * max(0, open_details)
    text = head + closers + footer
    if len(text) > limit_chars:  # pathological: hundreds of nested <details>
        text = footer.strip()[:limit_chars]
    return text, True


def publish(
    context: ActionsContext,
    client: GitHubClient | None,
    *,
    markdown: str,
    comment_key: str,
    annotations: list[Annotation],
    verdict: str,
    report_path: str,
    dry_run: bool,
    stream: TextIO,
    comment_author_login: str | None = None,
    post_comment: bool = True,
) -> PublishOutcome:
    """Write the job summary, print annotations, upsert the PR comment, write the outputs.

    `stream` receives the workflow commands and the log lines: in Actions it must be stdout,
    where the runner reads commands. `dry_run` sends nothing to GitHub and prints what would
    be sent; the local files (summary, outputs) are still written, since they are the point
    of a dry run in a job.
    `comment_author_login` is needed only when the token is a person's (see sticky_comment).
    """
    marker = comment_marker(comment_key)  # a bad key is the caller's bug: before any side effect
    problems: list[str] = []

    def say(line: str) -> None:
        print(line, file=stream)

    summary_written = False
    if context.step_summary_path is not None:
        try:
            if append_step_summary(context.step_summary_path, markdown):
                problems.append("job summary cut to GitHub's 1 MiB limit")
            summary_written = True
        except OSError as exc:
            problems.append(f"could not write the job summary {context.step_summary_path}: {exc}")

    limited = limit_annotations(annotations)
    for annotation in limited.shown:  # our own commands: past the defused stdout
        write_command(stream, annotation.format_workflow_command())

    hint = (
        f"The full report is in the [job summary]({context.run_url})"
        if context.run_url
        else "The full report is in the job summary"
    ) + f" and in `{report_path}`."
    markdown_fit, truncated = fit_comment(
        markdown, limit_chars=MAX_COMMENT_CHARS - len(marker) - 1, full_report_hint=hint
    )
    body = f"{marker}\n{markdown_fit}"

    comment: CommentOutcome | None = None
    if not post_comment:
        message = "no PR comment: turned off (comment: false); the report is in the job summary"
    elif context.pull_request is None:
        message = (
            f"no PR comment: this {context.event_name} event names no pull request "
            "(the report is in the job summary)"
        )
        if context.event_name == "workflow_run":
            # GitHub leaves workflow_run.pull_requests empty when the PR comes from a fork.
            message += (
                "; for a fork's PR, GitHub names none: take the number from the uploaded "
                "result documents (ActionsContext.for_pull_request)"
            )
    elif dry_run:
        _print_dry_run(say, context.repository, context.pull_request.number, marker, len(body))
        message = f"dry run: nothing sent to GitHub (comment body {len(body)} characters)"
    elif client is None:
        message = (
            "no PR comment: no GitHub token was given (pass `github-token`, or set "
            "GITHUB_TOKEN); the report is in the job summary"
        )
    else:
        try:
            comment = upsert_sticky_comment(
                client,
                context.repository,
                context.pull_request.number,
                marker,
                body,
                author_login=comment_author_login,
            )
            message = comment.message
        except GitHubForbidden as exc:
            message = _forbidden_message(context, exc)
        except GitHubError as exc:
            message = f"could not post the PR comment ({exc}); the report is in the job summary"

    outputs_written = False
    if context.output_path is not None:
        outputs = {
            "verdict": verdict,
            "comment-url": comment.url if comment else "",
            "report-path": report_path,
        }
        try:
            write_outputs(context.output_path, outputs)
            outputs_written = True
        except OSError as exc:
            problems.append(f"could not write the step outputs {context.output_path}: {exc}")

    say(f"compilegate publish: {message}")
    if limited.dropped_total:
        say(
            f"compilegate publish: {limited.dropped_total} annotation(s) beyond GitHub's "
            "per-step limit are summed up in one; all are in the job summary"
        )
    for problem in problems:
        say(f"compilegate publish: {problem}")
    return PublishOutcome(
        posted=comment is not None,
        message=message,
        verdict=verdict,
        comment=comment,
        summary_written=summary_written,
        outputs_written=outputs_written,
        annotations_shown=len(limited.shown),
        annotations_dropped=limited.dropped_total,
        comment_truncated=truncated,
        problems=tuple(problems),
    )


def _forbidden_message(context: ActionsContext, exc: GitHubForbidden) -> str:
    if context.is_fork and context.event_name == "pull_request":
        return (
            "no PR comment: this pull request comes from a fork, and GitHub gives such runs a "
            "read-only token (403). The report is in the job summary. To post it, upload the "
            "result documents as an artifact and run `compilegate publish` on them from a "
            "`workflow_run` job (see docs/action.md)"
        )
    if exc.read_only_token:
        return (
            'no PR comment: the token may not write comments (403, "Resource not accessible '
            'by integration"). Give the job `permissions: pull-requests: write`. The report '
            "is in the job summary"
        )
    return f"could not post the PR comment ({exc}); the report is in the job summary"


def _print_dry_run(
    say: Callable[[str], None], repo: str, pr_number: int, marker: str, body_chars: int
) -> None:
    comments = f"/repos/{repo}/issues/{pr_number}/comments"
    say("compilegate publish --dry-run: nothing is sent; this is what would be:")
    say(f"  GET    {comments}?per_page=100  (every page, looking for {marker})")
    say(f"  PATCH  /repos/{repo}/issues/comments/{{id}}  body {body_chars} characters  (found)")
    say(f"  POST   {comments}  body {body_chars} characters  (not found)")
