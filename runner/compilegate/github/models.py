"""The few fields compilegate reads from GitHub's REST payloads, as frozen dataclasses.

Each `from_api` reads only what compilegate uses and tolerates everything else GitHub adds
(its schemas set no `additionalProperties`), so a new field never breaks a run. A payload
missing a field we need raises `KeyError`/`TypeError`; the client turns that into a
`GitHubUnexpectedResponse` naming the endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IssueComment:
    """One comment on an issue or pull request (`issue-comment` in GitHub's description)."""

    id: int
    body: str
    html_url: str
    author_login: str | None
    """None when the author's account was deleted (GitHub then answers `user: null`)."""
    author_type: str | None
    """`Bot` for `github-actions[bot]` and GitHub Apps, `User` for people and PATs."""
    created_at: str

    @classmethod
    def from_api(cls, payload: Mapping[str, Any]) -> IssueComment:
        user = payload.get("user") or {}
        return cls(
            id=int(payload["id"]),
            body=payload.get("body") or "",
            html_url=str(payload["html_url"]),
            author_login=user.get("login"),
            author_type=user.get("type"),
            created_at=str(payload["created_at"]),
        )


@dataclass(frozen=True)
class PullRequest:
    """The parts of a pull request that decide where and whether to post."""

    number: int
    state: str
    html_url: str
    head_sha: str
    head_repo_full_name: str | None
    """None when the fork the PR came from has been deleted."""
    base_repo_full_name: str
    labels: tuple[str, ...] = ()
    """The names of the labels on the pull request now."""
    author_login: str | None = None

    @property
    def is_fork(self) -> bool:
        return self.head_repo_full_name != self.base_repo_full_name

    @classmethod
    def from_api(cls, payload: Mapping[str, Any]) -> PullRequest:
        head, base = payload["head"], payload["base"]
        return cls(
            number=int(payload["number"]),
            state=str(payload["state"]),
            html_url=str(payload["html_url"]),
            head_sha=str(head["sha"]),
            head_repo_full_name=(head.get("repo") or {}).get("full_name"),
            base_repo_full_name=str(base["repo"]["full_name"]),
            labels=tuple(
                str(label["name"])
                for label in payload.get("labels") or []
                if isinstance(label, Mapping) and isinstance(label.get("name"), str)
            ),
            author_login=(payload.get("user") or {}).get("login"),
        )


@dataclass(frozen=True)
class RateLimit:
    """The core REST quota of the token (`GET /rate_limit`, which does not count against it)."""

    limit: int
    remaining: int
    used: int
    reset_epoch_s: int

    @classmethod
    def from_api(cls, payload: Mapping[str, Any]) -> RateLimit:
        core = payload["resources"]["core"]
        return cls(
            limit=int(core["limit"]),
            remaining=int(core["remaining"]),
            used=int(core["used"]),
            reset_epoch_s=int(core["reset"]),
        )


@dataclass(frozen=True)
class Artifact:
    """A workflow artifact, e.g. a result document uploaded by an earlier run."""

    id: int
    name: str
    size_bytes: int
    expired: bool
    created_at: str | None
    expires_at: str | None
    workflow_run_id: int | None
    head_branch: str | None
    head_sha: str | None

    @classmethod
    def from_api(cls, payload: Mapping[str, Any]) -> Artifact:
        run = payload.get("workflow_run") or {}
        return cls(
            id=int(payload["id"]),
            name=str(payload["name"]),
            size_bytes=int(payload["size_in_bytes"]),
            expired=bool(payload["expired"]),
            created_at=payload.get("created_at"),
            expires_at=payload.get("expires_at"),
            workflow_run_id=run.get("id"),
            head_branch=run.get("head_branch"),
            head_sha=run.get("head_sha"),
        )


@dataclass(frozen=True)
class WorkflowRun:
    """One run of a workflow: what decides whether its artifacts may be trusted."""

    id: int
    event: str
    status: str | None
    conclusion: str | None
    head_branch: str | None
    head_sha: str
    head_repo_full_name: str | None
    """None when the repository the run's commit came from is gone."""
    repo_full_name: str
    path: str
    created_at: str

    @classmethod
    def from_api(cls, payload: Mapping[str, Any]) -> WorkflowRun:
        return cls(
            id=int(payload["id"]),
            event=str(payload["event"]),
            status=payload.get("status"),
            conclusion=payload.get("conclusion"),
            head_branch=payload.get("head_branch"),
            head_sha=str(payload["head_sha"]),
            head_repo_full_name=(payload.get("head_repository") or {}).get("full_name"),
            repo_full_name=str(payload["repository"]["full_name"]),
            path=str(payload.get("path") or ""),
            created_at=str(payload["created_at"]),
        )
