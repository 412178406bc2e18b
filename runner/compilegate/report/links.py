"""Where a report points: the commits, the run, its job summary and artifacts, the runner.

Inside GitHub Actions these come from the default environment variables (github/actions_env.py
reads the same ones); outside it every field is None and the report shows no links.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_RUN_ID = re.compile(r"^[0-9]{1,20}$")


@dataclass(frozen=True)
class LinkContext:
    """Where the measured code and the run live (all optional)."""

    server_url: str | None = None
    repository: str | None = None
    head_sha: str | None = None
    run_id: str | None = None
    runner: str | None = None
    # The pull request's commits and its base commit (the event payload), for the offer to
    # bisect a moved count (report/bisect_offer.py); None outside a pull request.
    pr_commits: int | None = None
    base_sha: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> LinkContext:
        """Links to the head commit and the run when inside GitHub Actions; none otherwise."""
        env = os.environ if environ is None else environ
        run_id = env.get("GITHUB_RUN_ID") or None
        commits, base = _pull_request_commits(env)
        runner = " ".join(
            part for part in (env.get("RUNNER_NAME"), _paren(env.get("RUNNER_OS"))) if part
        )
        return cls(
            server_url=env.get("GITHUB_SERVER_URL") or None,
            repository=env.get("GITHUB_REPOSITORY") or None,
            head_sha=_head_sha(env),
            run_id=run_id if run_id and _RUN_ID.match(run_id) else None,
            runner=runner or None,
            pr_commits=commits,
            base_sha=base,
        )

    def _repo_url(self) -> str | None:
        if not (self.server_url and self.repository):
            return None
        return f"{self.server_url.rstrip('/')}/{quote(self.repository, safe='/')}"

    def blob_url(self, path: str, line: int | None) -> str | None:
        repo = self._repo_url()
        if not (repo and self.head_sha) or not path:
            return None
        if path.startswith(("/", "\\")) or ".." in path.split("/"):
            return None  # not a repository-relative path
        anchor = f"#L{int(line)}" if isinstance(line, int) else ""
        return f"{repo}/blob/{quote(self.head_sha, safe='')}/{quote(path, safe='/')}{anchor}"

    def commit_url(self, sha: str | None) -> str | None:
        repo = self._repo_url()
        if not (repo and sha and _SHA.match(sha)):
            return None
        return f"{repo}/commit/{sha}"

    @property
    def run_url(self) -> str | None:
        repo = self._repo_url()
        return f"{repo}/actions/runs/{self.run_id}" if repo and self.run_id else None

    def run_links(self) -> list[tuple[str, str]]:
        """(label, url) for the run, its job summary and its artifacts; empty outside Actions.
        The job summary is on the run's page; the artifacts at its foot."""
        run = self.run_url
        if run is None:
            return []
        return [("run", run), ("job summary", run), ("artifacts", f"{run}#artifacts")]


def _paren(text: str | None) -> str | None:
    return f"({text})" if text else None


def _head_sha(env: Mapping[str, str]) -> str | None:
    """The pull request's head commit from the event payload, else GITHUB_SHA."""
    path = env.get("GITHUB_EVENT_PATH")
    if path:
        try:
            event = json.loads(Path(path).read_text(encoding="utf-8"))
            sha = ((event.get("pull_request") or {}).get("head") or {}).get("sha")
            if isinstance(sha, str) and sha:
                return sha
        except (OSError, ValueError, AttributeError):
            pass
    return env.get("GITHUB_SHA") or None


def _pull_request_commits(env: Mapping[str, str]) -> tuple[int | None, str | None]:
    """The pull request's number of commits and its base commit, from the event payload
    (None for what the payload lacks or holds something else at)."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None, None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
        pull = event.get("pull_request") or {}
        commits, base = pull.get("commits"), (pull.get("base") or {}).get("sha")
    except (OSError, ValueError, AttributeError):
        return None, None
    counted = isinstance(commits, int) and not isinstance(commits, bool) and commits > 0
    return (
        commits if counted else None,
        base if isinstance(base, str) and _SHA.match(base) else None,
    )
