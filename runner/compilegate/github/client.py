"""The GitHub REST calls compilegate makes, over an injected `requests.Session`.

Every request carries `Authorization: Bearer <token>`, `Accept: application/vnd.github+json`,
`X-GitHub-Api-Version: 2022-11-28`, a User-Agent and a timeout. Only the operations in
tests/contract/github/github-rest-subset.openapi.json (GitHub's own description) are used,
and the contract tests check every request and response against it.

Failures raise the typed errors of errors.py (`GitHubError` and its subclasses).

Retries (GitHub docs, "Rate limits for the REST API" and "Best practices for using the REST
API"): a 403/429 with `retry-after` waits that many seconds (secondary limit); one with
`x-ratelimit-remaining: 0` waits until `x-ratelimit-reset` (primary limit); one that says
"rate limit" without either header waits a minute, doubling each time. A 5xx or a dropped
connection is retried with exponential backoff, except for POST, which may have been
applied before the failure (the caller decides; see sticky_comment.py). Every wait comes out
of one budget per client, `max_total_wait_s`; the wait that would pass it raises instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import requests

from .. import __version__
from .errors import (
    GitHubRateLimited,
    GitHubTransportError,
    GitHubUnexpectedResponse,
    GitHubValidationFailed,
    error_for_response,
    header_seconds,
    rate_limit_wait,
)
from .models import Artifact, IssueComment, PullRequest, RateLimit, WorkflowRun

API_VERSION = "2022-11-28"
USER_AGENT = f"compilegate/{__version__}"
MAX_COMMENT_CHARS = 65_536
"""GitHub answers a longer comment body with 422 "Body is too long (maximum is 65536 ...)"."""
PER_PAGE_MAX = 100
MAX_RATE_LIMIT_RETRIES = 8
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PATCH", "PUT", "DELETE"})

Parsed = TypeVar("Parsed")


class _NoAuth(requests.auth.AuthBase):
    """Sends no credentials, and keeps requests from adding ~/.netrc ones for that host."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        return request


class GitHubClient:
    """Typed, retrying calls to the GitHub REST API. `repo` arguments are `owner/name`."""

    def __init__(
        self,
        session: requests.Session,
        api_url: str,
        token: str | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_total_wait_s: float = 300.0,
        max_attempts: int = 4,
        backoff_s: float = 1.0,
        timeout_s: tuple[float, float] = (10.0, 60.0),
        user_agent: str = USER_AGENT,
    ) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"GitHub API URL must be http(s)://host[/path], got {api_url!r}")
        self._session = session
        self._api_url = api_url.rstrip("/")
        self._api_prefix = (parts.scheme, parts.netloc, parts.path.rstrip("/") + "/")
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self._max_total_wait_s = max_total_wait_s
        self._max_attempts = max_attempts
        self._backoff_s = backoff_s
        self._timeout_s = timeout_s
        self._user_agent = user_agent
        self.waited_s = 0.0
        """Seconds slept so far for rate limits and backoff, across all requests."""

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"GitHubClient(api_url={self._api_url!r}, token={'***' if self._token else None})"

    # --- Operations (operationIds from GitHub's description) ---------------------------------

    def iter_issue_comments(self, repo: str, issue_number: int) -> Iterator[IssueComment]:
        """issues/list-comments: every comment, oldest first, following `Link: rel="next"`."""
        path = f"{_repo_path(repo)}/issues/{int(issue_number)}/comments"
        for item in self._paginate(path, {"per_page": PER_PAGE_MAX}, items_key=None):
            yield self._parse(IssueComment.from_api, item, "GET", path)

    def create_issue_comment(self, repo: str, issue_number: int, body: str) -> IssueComment:
        """issues/create-comment (POST: not retried after a 5xx or a dropped connection)."""
        path = f"{_repo_path(repo)}/issues/{int(issue_number)}/comments"
        _check_comment_length("POST", path, body)
        response = self._request("POST", path, json_body={"body": body}, ok=(201,))
        return self._parse(IssueComment.from_api, self._json(response, "POST", path), "POST", path)

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> IssueComment:
        """issues/update-comment."""
        path = f"{_repo_path(repo)}/issues/comments/{int(comment_id)}"
        _check_comment_length("PATCH", path, body)
        response = self._request("PATCH", path, json_body={"body": body})
        return self._parse(
            IssueComment.from_api, self._json(response, "PATCH", path), "PATCH", path
        )

    def get_pull_request(self, repo: str, pull_number: int) -> PullRequest:
        """pulls/get."""
        path = f"{_repo_path(repo)}/pulls/{int(pull_number)}"
        response = self._request("GET", path)
        return self._parse(PullRequest.from_api, self._json(response, "GET", path), "GET", path)

    def get_rate_limit(self) -> RateLimit:
        """rate-limit/get: the token's core quota (this call does not spend it)."""
        response = self._request("GET", "/rate_limit")
        payload = self._json(response, "GET", "/rate_limit")
        return self._parse(RateLimit.from_api, payload, "GET", "/rate_limit")

    def list_repo_artifacts(
        self,
        repo: str,
        *,
        name: str | None = None,
        head_branch: str | None = None,
        include_expired: bool = False,
        per_page: int = PER_PAGE_MAX,
    ) -> Iterator[Artifact]:
        """actions/list-artifacts-for-repo, newest first, lazily across pages.

        `name` is matched exactly (GitHub filters by it too); expired artifacts, whose zip is
        gone, are skipped unless asked for; `head_branch` keeps artifacts uploaded by runs on
        that branch (e.g. the default branch, for a baseline).
        """
        path = f"{_repo_path(repo)}/actions/artifacts"
        params: dict[str, Any] = {"per_page": max(1, min(int(per_page), PER_PAGE_MAX))}
        if name is not None:
            params["name"] = name
        for item in self._paginate(path, params, items_key="artifacts"):
            artifact = self._parse(Artifact.from_api, item, "GET", path)
            if name is not None and artifact.name != name:
                continue
            if artifact.expired and not include_expired:
                continue
            if head_branch is not None and artifact.head_branch != head_branch:
                continue
            yield artifact

    def get_default_branch(self, repo: str) -> str:
        """repos/get: the repository's default branch."""
        path = _repo_path(repo)
        payload = self._json(self._request("GET", path), "GET", path)
        return str(self._parse(lambda p: p["default_branch"], payload, "GET", path))

    def list_workflow_runs(
        self, repo: str, workflow: str, *, branch: str, status: str = "success"
    ) -> Iterator[WorkflowRun]:
        """actions/list-workflow-runs: runs of one workflow (file name or id), newest first.
        GitHub filters by branch and status; the caller still checks every run itself."""
        path = f"{_repo_path(repo)}/actions/workflows/{quote(str(workflow), safe='')}/runs"
        params = {"branch": branch, "status": status, "per_page": PER_PAGE_MAX}
        for item in self._paginate(path, params, items_key="workflow_runs"):
            yield self._parse(WorkflowRun.from_api, item, "GET", path)

    def list_run_artifacts(self, repo: str, run_id: int, *, name: str) -> Iterator[Artifact]:
        """actions/list-workflow-run-artifacts: one run's artifacts named `name`."""
        path = f"{_repo_path(repo)}/actions/runs/{int(run_id)}/artifacts"
        params = {"name": name, "per_page": PER_PAGE_MAX}
        for item in self._paginate(path, params, items_key="artifacts"):
            artifact = self._parse(Artifact.from_api, item, "GET", path)
            if artifact.name == name:
                yield artifact

    def list_open_pull_requests(
        self, repo: str, *, head: str | None = None
    ) -> Iterator[PullRequest]:
        """pulls/list: open pull requests, optionally those from `head` (`owner:branch`)."""
        path = f"{_repo_path(repo)}/pulls"
        params: dict[str, Any] = {"state": "open", "per_page": PER_PAGE_MAX}
        if head:
            params["head"] = head
        for item in self._paginate(path, params, items_key=None):
            yield self._parse(PullRequest.from_api, item, "GET", path)

    def download_artifact_zip(
        self, repo: str, artifact_id: int, *, max_bytes: int = 512 * 1024 * 1024
    ) -> bytes:
        """actions/download-artifact: the zip's bytes.

        GitHub answers 302 with a short-lived signed URL on another host; that request goes
        out without the token (and without ~/.netrc credentials).
        """
        path = f"{_repo_path(repo)}/actions/artifacts/{int(artifact_id)}/zip"
        response = self._request("GET", path, ok=(302,), allow_redirects=False)
        location = response.headers.get("Location")
        if not location or urlsplit(location).scheme not in ("http", "https"):
            raise GitHubUnexpectedResponse(
                f"GitHub answered GET {path} with 302 but no usable Location header",
                method="GET",
                path=path,
                status=302,
            )
        blob = self._request("GET", location, authenticated=False, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            for chunk in blob.iter_content(chunk_size=1024 * 1024):
                size += len(chunk)
                if size > max_bytes:
                    raise GitHubUnexpectedResponse(
                        f"artifact {artifact_id} of {repo} is larger than {max_bytes} bytes; "
                        "not downloaded",
                        method="GET",
                        path=path,
                    )
                chunks.append(chunk)
        except requests.RequestException as exc:
            raise GitHubTransportError(
                f"downloading artifact {artifact_id} of {repo} failed: {exc}",
                method="GET",
                path=path,
            ) from exc
        finally:
            blob.close()
        return b"".join(chunks)

    # --- Transport ---------------------------------------------------------------------------

    def _paginate(
        self, path: str, params: dict[str, Any] | None, *, items_key: str | None
    ) -> Iterator[Mapping[str, Any]]:
        """Yield the items of every page. The next page's URL is used as given (it carries
        `per_page`), after checking it points back at the API: a Link elsewhere would take
        the token with it."""
        target: str | None = path
        seen: set[str] = set()
        while target is not None:
            response = self._request("GET", target, params=params)
            payload = self._json(response, "GET", path)
            items = payload if items_key is None else _get(payload, items_key)
            if not isinstance(items, list):
                raise GitHubUnexpectedResponse(
                    f"GitHub answered GET {path} with a page that holds no list",
                    method="GET",
                    path=path,
                    status=response.status_code,
                )
            yield from items
            next_url = response.links.get("next", {}).get("url")
            if next_url is None:
                return
            if not self._is_api_url(next_url) or next_url in seen:
                raise GitHubUnexpectedResponse(
                    f"refusing to follow Link rel=next {next_url!r} from GET {path}: "
                    + ("seen before" if next_url in seen else "not under the API URL"),
                    method="GET",
                    path=path,
                )
            seen.add(next_url)
            target, params = next_url, None

    def _request(
        self,
        method: str,
        target: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Mapping[str, Any] | None = None,
        ok: tuple[int, ...] = (200,),
        allow_redirects: bool = True,
        authenticated: bool = True,
        stream: bool = False,
    ) -> requests.Response:
        """One logical request: retried as the module docstring says; `ok` or a typed error."""
        url = target if "://" in target else self._api_url + target
        path = self._api_path(url) if authenticated else "(artifact download URL)"
        retry_failures = method in IDEMPOTENT_METHODS
        attempt = rate_limited = 0
        while True:
            attempt += 1
            try:
                response = self._session.request(
                    method,
                    url,
                    params=params,
                    json=json_body,
                    headers=self._headers(authenticated),
                    auth=None if authenticated else _NoAuth(),
                    timeout=self._timeout_s,
                    allow_redirects=allow_redirects,
                    stream=stream,
                )
            except requests.RequestException as exc:
                if not retry_failures or attempt >= self._max_attempts:
                    raise GitHubTransportError(
                        f"{method} {path} failed after {attempt} attempt(s): {exc}",
                        method=method,
                        path=path,
                    ) from exc
                self._wait(self._backoff(attempt), method, path, None, rate_limit=False)
                continue
            if response.status_code in ok:
                return response
            limit = rate_limit_wait(response, self._clock(), rate_limited + 1)
            if limit is not None:
                rate_limited += 1
                wait_s, reason = limit
                if rate_limited > MAX_RATE_LIMIT_RETRIES:
                    raise GitHubRateLimited(
                        f"GitHub rate limit on {method} {path} ({reason}): still limited after "
                        f"{MAX_RATE_LIMIT_RETRIES} retries",
                        wait_s=wait_s,
                        method=method,
                        path=path,
                        status=response.status_code,
                    )
                self._wait(wait_s, method, path, response, rate_limit=True, reason=reason)
                response.close()
                continue
            if response.status_code >= 500 and retry_failures and attempt < self._max_attempts:
                retry_after = header_seconds(response.headers.get("retry-after"))
                wait_s = retry_after if retry_after is not None else self._backoff(attempt)
                self._wait(wait_s, method, path, response, rate_limit=False)
                response.close()
                continue
            raise error_for_response(response, method, path, attempt)

    def _headers(self, authenticated: bool) -> dict[str, str | None]:
        headers: dict[str, str | None] = {"User-Agent": self._user_agent}
        if not authenticated:
            headers["Authorization"] = None  # drops one set on the session, too
            return headers
        headers["Accept"] = "application/vnd.github+json"
        headers["X-GitHub-Api-Version"] = API_VERSION
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def _wait(
        self,
        wait_s: float,
        method: str,
        path: str,
        response: requests.Response | None,
        *,
        rate_limit: bool,
        reason: str = "",
    ) -> None:
        """Sleep `wait_s`, or raise when that would pass the client's total-wait budget."""
        wait_s = max(0.0, wait_s)
        if self.waited_s + wait_s > self._max_total_wait_s:
            status = None if response is None else response.status_code
            if rate_limit:
                raise GitHubRateLimited(
                    f"GitHub rate limit on {method} {path} ({reason}): waiting {wait_s:.0f} s "
                    f"more would pass the {self._max_total_wait_s:.0f} s wait cap",
                    wait_s=wait_s,
                    method=method,
                    path=path,
                    status=status,
                )
            if response is None:
                raise GitHubTransportError(
                    f"{method} {path} kept failing; retrying would pass the "
                    f"{self._max_total_wait_s:.0f} s wait cap",
                    method=method,
                    path=path,
                )
            raise error_for_response(response, method, path, attempts=None)
        self._sleep(wait_s)
        self.waited_s += wait_s

    def _backoff(self, attempt: int) -> float:
        return min(self._backoff_s * 2.0 ** (attempt - 1), 60.0)

    def _api_path(self, url: str) -> str:
        """`/repos/...` as GitHub's docs write it: without the API URL's own path."""
        path = urlsplit(url).path
        prefix = self._api_prefix[2]
        return path[len(prefix) - 1 :] if path.startswith(prefix) else path

    def _is_api_url(self, url: str) -> bool:
        parts = urlsplit(url)
        scheme, netloc, prefix = self._api_prefix
        return (
            parts.scheme == scheme
            and parts.netloc == netloc
            and (parts.path.rstrip("/") + "/").startswith(prefix)
        )

    @staticmethod
    def _json(response: requests.Response, method: str, path: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise GitHubUnexpectedResponse(
                f"GitHub answered {method} {path} with {response.status_code} and a body "
                "that is not JSON",
                method=method,
                path=path,
                status=response.status_code,
            ) from exc

    @staticmethod
    def _parse(factory: Callable[[Any], Parsed], payload: Any, method: str, path: str) -> Parsed:
        try:
            return factory(payload)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise GitHubUnexpectedResponse(
                f"GitHub's answer to {method} {path} lacks a field compilegate needs: {exc!r}",
                method=method,
                path=path,
            ) from exc


def _repo_path(repo: str) -> str:
    owner, sep, name = repo.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise ValueError(f"repository must be 'owner/name', got {repo!r}")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _check_comment_length(method: str, path: str, body: str) -> None:
    if len(body) > MAX_COMMENT_CHARS:
        raise GitHubValidationFailed(
            f"comment body is {len(body)} characters; GitHub accepts at most "
            f"{MAX_COMMENT_CHARS}: not sent ({method} {path})",
            method=method,
            path=path,
        )


def _get(payload: Any, key: str) -> Any:
    return payload.get(key) if isinstance(payload, Mapping) else None
