"""In-memory stand-ins for the unit tests: a comment store with the client's methods, and a
requests transport that answers from a list (no contract checks here: tests/contract does
those)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from compilegate.github import GitHubError, IssueComment

REPO = "octo-org/trainer"


@dataclass
class FakeCommentClient:
    """Duck-types the three GitHubClient methods the sticky comment uses."""

    comments: list[IssueComment] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    fail_with: GitHubError | None = None
    author_login: str = "github-actions[bot]"
    author_type: str = "Bot"
    next_id: int = 1000

    def add(self, body: str, *, login: str = "octocat", kind: str = "User") -> IssueComment:
        self.next_id += 1
        comment = IssueComment(
            id=self.next_id,
            body=body,
            html_url=f"http://pr.test/{REPO}/pull/42#issuecomment-{self.next_id}",
            author_login=login,
            author_type=kind,
            created_at="2025-01-01T00:00:00Z",
        )
        self.comments.append(comment)
        return comment

    def iter_issue_comments(self, repo: str, issue_number: int) -> Iterator[IssueComment]:
        self.calls.append(f"GET {repo}#{issue_number}")
        yield from list(self.comments)

    def create_issue_comment(self, repo: str, issue_number: int, body: str) -> IssueComment:
        self.calls.append(f"POST {repo}#{issue_number}")
        if self.fail_with is not None:
            raise self.fail_with
        return self.add(body, login=self.author_login, kind=self.author_type)

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> IssueComment:
        self.calls.append(f"PATCH {comment_id}")
        if self.fail_with is not None:
            raise self.fail_with
        index = next(i for i, c in enumerate(self.comments) if c.id == comment_id)
        old = self.comments[index]
        self.comments[index] = IssueComment(
            old.id, body, old.html_url, old.author_login, old.author_type, old.created_at
        )
        return self.comments[index]


@dataclass
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None


class ListAdapter(BaseAdapter):
    """Answers in order; an exception in the list is raised, as a dropped connection is."""

    def __init__(self, answers: list[Answer | BaseException]) -> None:
        super().__init__()
        self.answers = list(answers)
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.sent.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        response = requests.Response()
        response.status_code = answer.status
        response.headers = CaseInsensitiveDict(answer.headers)
        if answer.raw is not None:
            response.raw = io.BytesIO(answer.raw)
        else:
            response.raw = io.BytesIO(json.dumps(answer.body).encode())
            response.headers.setdefault("Content-Type", "application/json")
        response.url = request.url or ""
        response.request = request
        return response

    def close(self) -> None:
        pass


def session_over(adapter: BaseAdapter) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class FakeClock:
    def __init__(self, now_epoch_s: float = 1_700_000_000.0) -> None:
        self.now_epoch_s = now_epoch_s
        self.sleeps_s: list[float] = []

    def clock(self) -> float:
        return self.now_epoch_s

    def sleep(self, seconds: float) -> None:
        self.sleeps_s.append(seconds)
        self.now_epoch_s += seconds
