"""compilegate's GitHub side: REST client, sticky PR comment, Actions environment, publishing.

It never sees user code, only the rendered markdown, the verdict and, fetching the baseline
artifact (baseline_fetch.py), a result document: read by the gate's strict reader, written
by results/. The gate, below it, never calls GitHub.
"""

from __future__ import annotations

from ..report.workflow_annotation import Annotation, escape_data, escape_property
from .actions_env import (
    ActionsContext,
    LimitedAnnotations,
    PullRequestRef,
    append_step_summary,
    limit_annotations,
    write_outputs,
)
from .client import GitHubClient
from .errors import (
    GitHubError,
    GitHubForbidden,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubServerError,
    GitHubTransportError,
    GitHubUnauthorized,
    GitHubUnexpectedResponse,
    GitHubValidationFailed,
)
from .models import Artifact, IssueComment, PullRequest, RateLimit
from .publish import PublishOutcome, fit_comment, make_client, publish
from .sticky_comment import CommentOutcome, comment_marker, upsert_sticky_comment

__all__ = [
    "ActionsContext",
    "Annotation",
    "Artifact",
    "CommentOutcome",
    "GitHubClient",
    "GitHubError",
    "GitHubForbidden",
    "GitHubNotFound",
    "GitHubRateLimited",
    "GitHubServerError",
    "GitHubTransportError",
    "GitHubUnauthorized",
    "GitHubUnexpectedResponse",
    "GitHubValidationFailed",
    "IssueComment",
    "LimitedAnnotations",
    "PublishOutcome",
    "PullRequest",
    "PullRequestRef",
    "RateLimit",
    "append_step_summary",
    "comment_marker",
    "escape_data",
    "escape_property",
    "fit_comment",
    "limit_annotations",
    "make_client",
    "publish",
    "upsert_sticky_comment",
    "write_outputs",
]
