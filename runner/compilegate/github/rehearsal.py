"""GitHub's answers for `publish --dry-run`, so a rehearsal runs the real acceptance check.

A dry run sends nothing and asks GitHub nothing, yet check_acceptance (github/acceptance.py)
needs two reads: the pull request now (`GET /repos/{owner}/{repo}/pulls/{pull_number}`)
and, for a fork's `workflow_run`, its comments (the labelling's record). `RehearsedGitHub`
answers both, each from a saved payload of GitHub's answer when one is given
(`--saved-pull-request FILE`, `--saved-comments FILE`), else assumed from the event as
GitHub delivered it; every answer it gives is noted, in the order asked, so the rehearsal
says what it took on trust. A `publish --dry-run` that approved what the real path refuses
(a `bug` label, a `synchronize` event, the author's own label) was worse than none
(issue 54, finding 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .acceptance_record import AcceptanceRecord
from .actions_env import PULL_REQUEST_EVENTS
from .event_fields import MissingEventField, event_number, event_object, event_text
from .models import IssueComment, PullRequest


class RehearsedGitHub:
    """The reads an acceptance makes (AcceptanceReader), answered without the network.

    `notes` holds one line per answer given: where it came from (a saved payload), or what
    was assumed and how to give GitHub's own answer instead."""

    def __init__(
        self,
        event_name: str,
        payload: Mapping[str, Any],
        accept_label: str,
        *,
        saved_pull: tuple[Path, PullRequest] | None = None,
        saved_comments: tuple[Path, tuple[IssueComment, ...]] | None = None,
    ) -> None:
        self._event_name = event_name
        self._payload = payload
        self._accept_label = accept_label
        self._saved_pull = saved_pull
        self._saved_comments = saved_comments
        self.notes: list[str] = []

    def get_pull_request(self, repo: str, pull_number: int) -> PullRequest:
        asked = f"GET /repos/{repo}/pulls/{pull_number}"
        if self._saved_pull is not None:
            path, pull = self._saved_pull
            self.notes.append(f"{asked}: answered from the saved {path}")
            return pull
        pull = self._pull_as_the_event_left_it(repo, pull_number)
        labels = ", ".join(f'"{label}"' for label in pull.labels) or "none"
        self.notes.append(
            f"{asked}: assumed {pull.state}, head {pull.head_sha[:12]}, labels {labels}, "
            f"author @{pull.author_login} (as the event left it; --saved-pull-request FILE "
            "gives GitHub's own answer)"
        )
        return pull

    def iter_issue_comments(self, repo: str, issue_number: int) -> Iterator[IssueComment]:
        asked = f"GET /repos/{repo}/issues/{issue_number}/comments"
        if self._saved_comments is not None:
            path, comments = self._saved_comments
            self.notes.append(f"{asked}: answered from the saved {path}")
            return iter(comments)
        self.notes.append(
            f"{asked}: assumed no comments, so no acceptance record (--saved-comments FILE "
            "gives GitHub's own answer)"
        )
        return iter(())

    def _pull_as_the_event_left_it(self, repo: str, pull_number: int) -> PullRequest:
        """The pull request as the event shows it: a `labeled` event's pull request carries
        the label just applied; a workflow_run's carries the accept label and whatever label
        a saved record names."""
        payload = self._payload
        if self._event_name in PULL_REQUEST_EVENTS:
            pull = event_object(payload, "pull_request")
            labels = [
                str(label["name"])
                for label in pull.get("labels") or []
                if isinstance(label, Mapping) and isinstance(label.get("name"), str)
            ]
            applied = (payload.get("label") or {}).get("name")
            if payload.get("action") == "labeled" and isinstance(applied, str):
                labels += [applied] if applied not in labels else []
            return PullRequest(
                number=pull_number,
                state=str(pull.get("state") or "open"),
                html_url=str(pull.get("html_url") or ""),
                head_sha=event_text(payload, "pull_request.head.sha"),
                head_repo_full_name=((pull.get("head") or {}).get("repo") or {}).get("full_name"),
                base_repo_full_name=repo,
                labels=tuple(labels),
                author_login=event_text(payload, "pull_request.user.login"),
            )
        run = event_object(payload, "workflow_run")
        labels = [self._accept_label]
        for comment in self._saved_comments[1] if self._saved_comments else ():
            record = AcceptanceRecord.from_body(comment.body)
            if record is not None and record.label not in labels:
                labels.append(record.label)
        return PullRequest(
            number=pull_number,
            state="open",
            html_url="",
            head_sha=event_text(payload, "workflow_run.head_sha"),
            head_repo_full_name=(run.get("head_repository") or {}).get("full_name"),
            base_repo_full_name=repo,
            labels=tuple(labels),
            author_login=None,
        )


def load_saved_pull_request(path: Path) -> PullRequest:
    """A saved answer of `GET /repos/{owner}/{repo}/pulls/{pull_number}`; a key it lacks is
    a usage error naming it."""
    payload = _load_json(path, "--saved-pull-request")
    try:
        for key in ("head.sha", "base.repo.full_name", "state", "html_url"):
            event_text(payload, key)
        event_number(payload, "number")
        return PullRequest.from_api(payload)
    except MissingEventField as exc:
        raise UsageError(f"--saved-pull-request {path}: not a pulls/get answer: {exc}") from None


def load_saved_comments(path: Path) -> tuple[IssueComment, ...]:
    """A saved answer of `GET /repos/{owner}/{repo}/issues/{issue_number}/comments` (a JSON
    list, every page joined); a key a comment lacks is a usage error naming it."""
    payload = _load_json(path, "--saved-comments")
    if not isinstance(payload, list):
        raise UsageError(f"--saved-comments {path}: expected a JSON list of comments")
    listed = {"": payload}  # so that a key path reads `[3].id`
    try:
        for i in range(len(payload)):
            event_number(listed, f"[{i}].id")
            event_text(listed, f"[{i}].html_url")
            event_text(listed, f"[{i}].created_at")
    except MissingEventField as exc:
        raise UsageError(
            f"--saved-comments {path}: not an issues/list-comments answer: {exc}"
        ) from None
    return tuple(IssueComment.from_api(item) for item in payload)


def _load_json(path: Path, flag: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise UsageError(f"{flag} {path}: not valid JSON ({exc})") from None
