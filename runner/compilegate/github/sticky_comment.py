"""One pull-request comment per key, found again by a hidden marker and updated in place.

The marker is an HTML comment, `<!-- compilegate: {key} -->`, which GitHub does not render.
A comment is ours when its *first line* is exactly the marker and its author is the one
identity compilegate comments as: `github-actions[bot]` (what `GITHUB_TOKEN` posts as) or,
when the caller names it, the login of the token it was given (an App's `<slug>[bot]`, a
person's login: `--comment-author`). Not any bot: another App installed on the repository
that echoes user text into its comments could otherwise write "our" comment, and have it
edited (issue 51, finding 7). The token cannot say who it is through the API compilegate
uses (its contract has no `GET /user` or `GET /app`), so a token other than `GITHUB_TOKEN`
is named by the workflow. A login is unique on GitHub and no person's holds `[bot]`, so the
login (with `type: Bot` for an App's) decides. So a person who quotes the marker, or pastes
it anywhere but the first line, never has their comment overwritten. Every page of comments
is read (GitHub lists them oldest first, 30 a page by default); several comments carrying
the marker (left by an older, buggier run) are not deleted: the newest is updated and the
outcome names the others.

Not defended: two runs racing on the same PR can each find no comment and both create one;
serialize them with a workflow `concurrency:` group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .client import GitHubClient
from .errors import GitHubServerError, GitHubTransportError
from .models import IssueComment

MARKER_TEMPLATE = "<!-- compilegate: {key} -->"
GITHUB_ACTIONS_LOGIN = "github-actions[bot]"
"""Who `GITHUB_TOKEN` comments as (the GitHub Actions app's bot account)."""
_KEY_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:+-]{0,99}")


def comment_marker(key: str) -> str:
    """The hidden marker for `key` (letters, digits and `._/:+-`; at most 100 characters)."""
    if not _KEY_PATTERN.fullmatch(key):
        raise ValueError(
            f"comment key {key!r} must start with a letter or digit and hold only letters, "
            "digits and ._/:+- (at most 100 characters)"
        )
    return MARKER_TEMPLATE.format(key=key)


@dataclass(frozen=True)
class CommentOutcome:
    """What the upsert did, in words a job log can show as they are."""

    action: Literal["created", "updated"]
    url: str
    id: int
    older_duplicate_ids: tuple[int, ...] = ()
    """Other comments of ours carrying the marker (left as they are)."""
    ignored_ids: tuple[int, ...] = ()
    """Comments whose first line is the marker but whose author is not ours."""

    @property
    def message(self) -> str:
        text = f"{self.action} comment {self.url}"
        if self.older_duplicate_ids:
            ids = ", ".join(str(i) for i in self.older_duplicate_ids)
            text += (
                f"; {len(self.older_duplicate_ids) + 1} comments carried the marker (from "
                f"earlier runs): updated the newest, left {ids} as they were"
            )
        if self.ignored_ids:
            ids = ", ".join(str(i) for i in self.ignored_ids)
            text += f"; ignored {ids}: marker on the first line, but not written by us"
        return text


def with_marker(marker: str, body: str) -> str:
    """`body` with `marker` as its first line (added when it is not there already)."""
    return body if _first_line(body) == marker else f"{marker}\n{body}"


def is_ours(comment: IssueComment, marker: str, author_login: str | None) -> bool:
    """First line is the marker, and the author is the given login (None:
    `github-actions[bot]`, GITHUB_TOKEN's)."""
    return _first_line(comment.body) == marker and is_written_by(comment, author_login)


def is_written_by(comment: IssueComment, author_login: str | None) -> bool:
    """Whether `author_login` (None: `github-actions[bot]`) wrote the comment: the login, and
    the account's type that login implies (an App's `[bot]` login is a Bot; a person's, a
    User). Any other bot is another's."""
    login = GITHUB_ACTIONS_LOGIN if author_login is None else author_login
    kind = "Bot" if login.endswith("[bot]") else "User"
    return comment.author_login == login and comment.author_type == kind


def upsert_sticky_comment(
    client: GitHubClient,
    repo: str,
    pr_number: int,
    marker: str,
    body: str,
    *,
    author_login: str | None = None,
) -> CommentOutcome:
    """Update our comment carrying `marker` on the PR, or create it when there is none.

    `author_login` is who the token comments as: None for `GITHUB_TOKEN`
    (`github-actions[bot]`); an App token's `<slug>[bot]`, a person's login. A marked comment
    by anyone else is never edited (the outcome names it). GitHubErrors propagate.
    """
    if "\n" in marker or not (marker.startswith("<!--") and marker.endswith("-->")):
        raise ValueError(f"marker must be one line holding an HTML comment, got {marker!r}")
    text = with_marker(marker, body)
    ours, ignored = _find(client, repo, pr_number, marker, author_login)
    if ours:
        newest = max(ours, key=lambda c: c.id)  # comment ids grow with time
        updated = client.update_issue_comment(repo, newest.id, text)
        return CommentOutcome(
            action="updated",
            url=updated.html_url,
            id=updated.id,
            older_duplicate_ids=tuple(sorted(c.id for c in ours if c.id != newest.id)),
            ignored_ids=ignored,
        )
    try:
        created = client.create_issue_comment(repo, pr_number, text)
    except (GitHubServerError, GitHubTransportError):
        # A POST that failed with a 5xx or a dropped connection may still have created the
        # comment: look before trying again, so one key never gets two comments.
        ours, ignored = _find(client, repo, pr_number, marker, author_login)
        if ours:
            found = max(ours, key=lambda c: c.id)
            return CommentOutcome("created", found.html_url, found.id, ignored_ids=ignored)
        created = client.create_issue_comment(repo, pr_number, text)
    return CommentOutcome("created", created.html_url, created.id, ignored_ids=ignored)


def _find(
    client: GitHubClient, repo: str, pr_number: int, marker: str, author_login: str | None
) -> tuple[list[IssueComment], tuple[int, ...]]:
    ours: list[IssueComment] = []
    ignored: list[int] = []
    for comment in client.iter_issue_comments(repo, pr_number):
        if is_ours(comment, marker, author_login):
            ours.append(comment)
        elif _first_line(comment.body) == marker:
            ignored.append(comment.id)
    return ours, tuple(ignored)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()
