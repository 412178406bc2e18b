"""The errors a GitHub request ends in: one class per way it can fail, each a
`CompilegateError` (exit code 3) with a one-line message naming the request. Also how an
answer is read as one of them, and how a 403/429 is told apart as a rate limit (GitHub docs,
"Rate limits for the REST API"); client.py decides what to do about each.

    GitHubError                   base; .status (None when no answer came), .method, .path
    ├── GitHubTransportError      no answer: connection refused or reset, timeout (after retries)
    ├── GitHubUnauthorized        401: the token is missing, expired or wrong
    ├── GitHubForbidden           403 that is not a rate limit; .read_only_token is True when
    │                             GitHub says "Resource not accessible by integration" (the
    │                             read-only token of a fork's pull_request run, or a workflow
    │                             whose `permissions:` lack the scope)
    ├── GitHubNotFound            404 or 410: repository, PR, comment or artifact gone or hidden
    ├── GitHubValidationFailed    422 (e.g. a comment body too long), or a body refused here
    │                             before sending; .errors holds GitHub's list
    ├── GitHubRateLimited         rate limited, and waiting would pass the total-wait cap
    ├── GitHubServerError         5xx, still failing after the retries
    └── GitHubUnexpectedResponse  anything else: an undocumented status, a body that is not the
                                  JSON promised, a Link or redirect we refuse to follow
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import requests

from ..errors import EXIT_RUN_ERROR, CompilegateError

READ_ONLY_TOKEN_MESSAGE = "Resource not accessible by integration"
"""What GitHub says when a token lacks a permission, e.g. a fork's pull_request token."""


class GitHubError(CompilegateError):
    """Base class: a GitHub request failed. Never raised itself."""

    exit_code = EXIT_RUN_ERROR

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        path: str | None = None,
        status: int | None = None,
        documentation_url: str | None = None,
    ) -> None:
        super().__init__(message)
        self.method = method
        self.path = path
        self.status = status
        self.documentation_url = documentation_url


class GitHubTransportError(GitHubError):
    """No answer: the connection failed or timed out, and retrying did not help."""


class GitHubUnauthorized(GitHubError):
    """401: GitHub did not accept the token."""


class GitHubForbidden(GitHubError):
    """403 that is not a rate limit: the token may not do this."""

    def __init__(self, message: str, *, read_only_token: bool, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.read_only_token = read_only_token


class GitHubNotFound(GitHubError):
    """404 or 410: the resource does not exist (any more), or this token cannot see it."""


class GitHubValidationFailed(GitHubError):
    """422, or a request refused before sending because GitHub would refuse it."""

    def __init__(
        self, message: str, *, errors: tuple[Mapping[str, Any], ...] = (), **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        self.errors = errors


class GitHubRateLimited(GitHubError):
    """Rate limited, and the wait GitHub asks for would pass `max_total_wait_s`."""

    def __init__(self, message: str, *, wait_s: float, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.wait_s = wait_s


class GitHubServerError(GitHubError):
    """5xx, still failing after the retries (or on a POST, which is not retried)."""


class GitHubUnexpectedResponse(GitHubError):
    """An answer compilegate cannot use: an undocumented status, bad JSON, a foreign Link."""


def github_message(response: requests.Response) -> tuple[str, str | None, tuple[Any, ...]]:
    """GitHub's `message` (on one line), `documentation_url` and `errors`, or the body's start."""
    try:
        payload = response.json()
    except ValueError:
        return _one_line(response.text[:200]) or response.reason or "no body", None, ()
    if not isinstance(payload, Mapping):
        return _one_line(str(payload)[:200]), None, ()
    errors = tuple(e for e in payload.get("errors") or () if isinstance(e, Mapping))
    return _one_line(str(payload.get("message", ""))), payload.get("documentation_url"), errors


def _one_line(text: str) -> str:
    return " ".join(text.split())


def error_for_response(
    response: requests.Response, method: str, path: str, attempts: int | None
) -> GitHubError:
    status = response.status_code
    message, documentation_url, errors = github_message(response)
    details = "; ".join(_one_line(str(e.get("message") or e.get("code"))) for e in errors)
    said = message + (f" ({details})" if details else "")
    tried = f" after {attempts} attempts" if attempts and attempts > 1 else ""
    text = f"GitHub answered {method} {path} with {status}{tried}: {said}"
    common: dict[str, Any] = {
        "method": method,
        "path": path,
        "status": status,
        "documentation_url": documentation_url,
    }
    if status == 401:
        return GitHubUnauthorized(text, **common)
    if status == 403:
        return GitHubForbidden(
            text, read_only_token=READ_ONLY_TOKEN_MESSAGE.lower() in message.lower(), **common
        )
    if status in (404, 410):
        return GitHubNotFound(text, **common)
    if status == 422:
        return GitHubValidationFailed(text, errors=errors, **common)
    if status >= 500:
        return GitHubServerError(text, **common)
    return GitHubUnexpectedResponse(text, **common)


def header_seconds(value: str | None) -> float | None:
    """A header's number of seconds (epoch or duration), or None when absent or not a number."""
    try:
        seconds = None if value is None else float(value)
    except ValueError:
        return None
    return None if seconds is None or not math.isfinite(seconds) else max(0.0, seconds)


def rate_limit_wait(
    response: requests.Response, now_epoch_s: float, times_limited: int
) -> tuple[float, str] | None:
    """(seconds to wait, why) when this 403/429 is a rate limit, else None."""
    if response.status_code not in (403, 429):
        return None
    retry_after = header_seconds(response.headers.get("retry-after"))
    if retry_after is not None:
        return retry_after, f"secondary limit, retry-after {retry_after:.0f} s"
    reset = header_seconds(response.headers.get("x-ratelimit-reset"))
    if response.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        at = datetime.fromtimestamp(reset, tz=timezone.utc).strftime("%H:%M:%SZ")
        # One second past the reset: GitHub's clock and ours are not the same clock.
        return reset - now_epoch_s + 1.0, f"primary limit, resets at {at}"
    message, _, _ = github_message(response)
    if response.status_code == 429 or "rate limit" in message.lower():
        # No header to go by: "wait for at least one minute", then exponentially longer.
        return 60.0 * 2 ** (times_limited - 1), "secondary limit, no retry-after"
    return None
