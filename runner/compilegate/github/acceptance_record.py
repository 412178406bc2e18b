"""The acceptance of a fork's pull request, recorded when the label is applied, bound to a commit.

A fork's results are published from a `workflow_run` job (fork-publish.yml), and that event
says only that the measuring run came from a `pull_request` event, never whether its action
was `labeled`: a maintainer who reopens the pull request, or pushes to its branch, starts a
run just as a labelling does. Judged there alone, a label applied to one commit would
accept every later one the fork pushed. So the labelling itself is recorded where it
happens: fork-publish.yml's `pull_request_target` job (the base branch's workflow, never the
fork's, running no pull-request code) receives the `labeled` event, verifies it like a
same-repository one (github/acceptance.py) and writes this record as a comment of its own on
the pull request:

    <!-- compilegate: acceptance record -->
    <!-- {"commit": "<head SHA when labelled>", "label": "...", "login": "..."} -->
    @maintainer applied "compilegate: accept" at `0123456789ab`: ...

A later `workflow_run` job accepts only the commit recorded, while the label is still on
the pull request. The record is ours when its first line is the marker and the identity
compilegate comments as wrote it (github/sticky_comment.is_ours, as for the report's
comment): `github-actions[bot]`, or the login `--comment-author` names when the jobs post
with another token. Not any bot: another App on the repository that echoes user text into a
comment wrote a record that accepted a fork's regressions (issue 51, finding 7), and would
have had its comment edited. A fork's own workflows hold a read-only token and cannot
comment, and a person who pastes the marker is ignored. The
marker holds a space, which a comment key (`--comment-key`) cannot, so it never meets a
report's comment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ..report.escape import code_span, inert
from .client import GitHubClient
from .models import IssueComment
from .sticky_comment import CommentOutcome, is_ours, upsert_sticky_comment

RECORD_MARKER = "<!-- compilegate: acceptance record -->"
_RECORD_LINE = re.compile(r"<!-- (\{.*\}) -->")
_SHA = re.compile(r"[0-9a-f]{40}")


class CommentReader(Protocol):
    """Lists a pull request's comments: GitHubClient, or a dry run's rehearsal
    (github/rehearsal.py)."""

    def iter_issue_comments(self, repo: str, issue_number: int) -> Iterator[IssueComment]: ...


@dataclass(frozen=True)
class AcceptanceRecord:
    """Who applied which label to the pull request while its head was `commit`."""

    commit: str
    label: str
    login: str

    def body(self) -> str:
        """The comment that records it: the marker, the record as JSON in an HTML comment
        (`>` escaped, so no label closes it), one sentence a reader sees."""
        data = json.dumps(
            {"commit": self.commit, "label": self.label, "login": self.login}, sort_keys=True
        ).replace(">", "\\u003e")
        return (
            f"{RECORD_MARKER}\n<!-- {data} -->\n"
            f"{inert('@' + self.login)} applied the label {code_span(self.label)} at "
            f"{code_span(self.commit[:12])}: compilegate accepts that commit's regressions "
            "while the label stays on the pull request. A later push needs the label applied "
            "again.\n"
        )

    @classmethod
    def from_body(cls, body: str) -> AcceptanceRecord | None:
        """The record a comment body holds, or None when it holds none that is well formed."""
        lines = body.split("\n")
        if len(lines) < 2 or lines[0].strip() != RECORD_MARKER:
            return None
        match = _RECORD_LINE.fullmatch(lines[1].strip())
        if match is None:
            return None
        try:
            data = json.loads(match[1])
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        commit, label, login = data.get("commit"), data.get("label"), data.get("login")
        if not (isinstance(commit, str) and _SHA.fullmatch(commit)):
            return None
        if not (isinstance(label, str) and label and isinstance(login, str) and login):
            return None
        return cls(commit=commit, label=label, login=login)


def write_record(
    client: GitHubClient,
    repo: str,
    pull_number: int,
    record: AcceptanceRecord,
    *,
    author_login: str | None = None,
) -> CommentOutcome:
    """Record the acceptance on the pull request: the one record comment, updated in place
    (the newest labelling is the one that counts). Only a record comment `author_login`
    (None: `github-actions[bot]`) wrote is edited."""
    return upsert_sticky_comment(
        client, repo, pull_number, RECORD_MARKER, record.body(), author_login=author_login
    )


def newest_record(
    client: CommentReader, repo: str, pull_number: int, *, author_login: str | None = None
) -> AcceptanceRecord | None:
    """The record in the newest record comment `author_login` (None: `github-actions[bot]`)
    wrote on the pull request, or None: anyone else's is ignored."""
    ours = [
        comment
        for comment in client.iter_issue_comments(repo, pull_number)
        if is_ours(comment, RECORD_MARKER, author_login)
    ]
    for comment in sorted(ours, key=lambda c: c.id, reverse=True):  # ids grow with time
        record = AcceptanceRecord.from_body(comment.body)
        if record is not None:
            return record
    return None
