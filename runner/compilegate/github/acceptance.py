"""Whether a maintainer accepted this run's regressions: the base branch's label, verified.

gate/acceptance.py turns regression rows into `accepted` for an `Acceptance`; this module
decides whether there is one, from the event GitHub sent the job and from GitHub's own view
of the pull request, never from anything the pull request wrote (its config, its result
documents, its branch name). An acceptance is bound to the commit that was the pull
request's head when the label was applied: a later push needs the label applied again.

    pull_request /             action `labeled`, the label the base side names
    pull_request_target        (`accept_label`), applied by a User (not a Bot), not by the
                               pull request's author; the commit is the event's head
    workflow_run               (fork-publish.yml) the triggering run came from a
                               `pull_request` event; the labelling was recorded by
                               fork-publish.yml's `pull_request_target` job
                               (github/acceptance_record.py) at the commit the run measured
    all                        GET /repos/{owner}/{repo}/pulls/{pull_number} now: the pull
                               request is open, carries the label, and its head commit is the
                               one labelled and measured

A `workflow_run` payload says only that its run came from a `pull_request` event, not from
which action: a reopening, or a maintainer's push to the fork's branch, starts one as a
labelling does. So that event accepts only what was recorded when the label was applied.

GitHub lets only people with triage rights or more on the repository apply a label, so a
`labeled` event by someone other than the author is a maintainer's. Who applied the label
cannot be confirmed through the API this project uses (the contract has no issue-events or
collaborator-permission endpoint): it is taken from the `labeled` event GitHub delivered.
docs/security.md states it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..gate.acceptance import label_accepts
from ..gate.verdict import Acceptance
from .acceptance_record import AcceptanceRecord, CommentReader, newest_record, write_record
from .client import GitHubClient
from .errors import GitHubError
from .event_fields import MissingEventField, event_object, event_text
from .models import PullRequest

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


class AcceptanceReader(CommentReader, Protocol):
    """The reads an acceptance needs: GitHubClient in a real publish; in a dry run, GitHub's
    answers stated as assumptions or read from saved payloads (github/rehearsal.py), so
    both run the same check."""

    def get_pull_request(self, repo: str, pull_number: int) -> PullRequest: ...


@dataclass(frozen=True)
class AcceptanceCheck:
    """An acceptance, or why there is none (one line for the job log and the report)."""

    acceptance: Acceptance | None
    why_not: str | None = None


def check_acceptance(
    event_name: str,
    payload: Mapping[str, Any],
    accept_label: str,
    client: AcceptanceReader | None,
    repository: str,
    pull_number: int,
    *,
    record_author: str | None = None,
) -> AcceptanceCheck:
    """Whether `accept_label` on pull request `pull_number` accepts this run's regressions.
    A workflow_run's record counts only when `record_author` (None: `github-actions[bot]`)
    wrote it."""
    try:
        claimed = _claim(event_name, payload, accept_label)
    except MissingEventField as exc:
        return AcceptanceCheck(None, f"the {event_name} payload is not usable: {exc}")
    if isinstance(claimed, str):
        return AcceptanceCheck(None, claimed)
    if client is None:
        return AcceptanceCheck(None, "no token to confirm the label with GitHub")
    try:
        pull = client.get_pull_request(repository, pull_number)
        if claimed.label is None:  # a workflow_run: what the labelling recorded
            record = newest_record(client, repository, pull_number, author_login=record_author)
            claimed = _recorded(claimed, record, pull_number)
            if isinstance(claimed, str):
                return AcceptanceCheck(None, claimed)
    except GitHubError as exc:
        return AcceptanceCheck(None, f"could not read pull request #{pull_number} ({exc})")
    author = pull.author_login or claimed.author
    if pull.state != "open":
        return AcceptanceCheck(None, f"pull request #{pull_number} is {pull.state}")
    label = claimed.label
    if label is None:  # _recorded completed a workflow_run's claim, or said why not
        return AcceptanceCheck(None, f"no label on pull request #{pull_number} was recorded")
    if not label_accepts(label, accept_label):
        return AcceptanceCheck(None, f'the label applied is "{label}", not "{accept_label}"')
    if label not in pull.labels:
        return AcceptanceCheck(None, f'pull request #{pull_number} does not carry "{label}"')
    if pull.head_sha != claimed.commit:
        return AcceptanceCheck(
            None,
            f"pull request #{pull_number} moved to {pull.head_sha[:12]} after the labelled "
            f"commit {claimed.commit[:12]}: apply the label again",
        )
    if author is None or claimed.login == author:
        return AcceptanceCheck(
            None, f"@{claimed.login} wrote the pull request: its author cannot accept it"
        )
    return AcceptanceCheck(Acceptance(label=label, login=claimed.login, commit=claimed.commit))


@dataclass(frozen=True)
class _Claim:
    """What the event says: who applied which label (None: not said, a workflow_run) while
    the head was `commit` (for a workflow_run: the commit its run measured)."""

    login: str
    commit: str
    label: str | None
    author: str | None = None


def _claim(event_name: str, payload: Mapping[str, Any], accept_label: str) -> _Claim | str:
    """What the event claims, or why it claims no acceptance."""
    if event_name in PULL_REQUEST_EVENTS:
        if payload.get("action") != "labeled":
            return f"a {event_name} event of action {payload.get('action')!r}, not `labeled`"
        label = event_text(payload, "label.name")
        if not label_accepts(label, accept_label):
            return f'the label applied is "{label}", not "{accept_label}"'
        sender = event_object(payload, "sender")
        if sender.get("type") != "User":
            kind, login = sender.get("type"), sender.get("login")
            return f"the label was applied by {kind} @{login}, not by a person"
        return _Claim(
            login=event_text(payload, "sender.login"),
            commit=event_text(payload, "pull_request.head.sha"),
            label=label,
            author=event_text(payload, "pull_request.user.login"),
        )
    if event_name == "workflow_run":
        run_event = event_text(payload, "workflow_run.event")
        if run_event != "pull_request":
            return f"the triggering run was started by {run_event}, not by a pull request"
        return _Claim(login="", commit=event_text(payload, "workflow_run.head_sha"), label=None)
    return f"a {event_name} event cannot accept"


def _recorded(claimed: _Claim, record: AcceptanceRecord | None, pull_number: int) -> _Claim | str:
    """A workflow_run's claim completed from the labelling's record, or why there is none."""
    if record is None:
        return (
            f"no labelling of pull request #{pull_number} was recorded (a fork's label is "
            "recorded when it is applied, by fork-publish.yml's pull_request_target job)"
        )
    if record.commit != claimed.commit:
        return (
            f'"{record.label}" was applied at {record.commit[:12]}, not at the measured '
            f"commit {claimed.commit[:12]}: apply the label again"
        )
    return _Claim(login=record.login, commit=record.commit, label=record.label)


def record_acceptance(
    event_name: str,
    payload: Mapping[str, Any],
    accept_label: str,
    client: GitHubClient | None,
    repository: str,
    pull_number: int,
    *,
    record_author: str | None = None,
) -> AcceptanceCheck:
    """In the job a `labeled` event started (fork-publish.yml's pull_request_target job):
    verify the labelling as check_acceptance does and, when it stands, record it on the pull
    request at the labelled commit for the fork's later workflow_run jobs, as
    `record_author` (None: `github-actions[bot]`), the login the token comments as."""
    if event_name not in PULL_REQUEST_EVENTS:
        return AcceptanceCheck(None, f"a {event_name} event records no acceptance")
    check = check_acceptance(event_name, payload, accept_label, client, repository, pull_number)
    if check.acceptance is None or client is None:
        return check
    found = check.acceptance
    record = AcceptanceRecord(commit=found.commit, label=found.label, login=found.login)
    try:
        write_record(client, repository, pull_number, record, author_login=record_author)
    except GitHubError as exc:
        return AcceptanceCheck(None, f"could not record the acceptance ({exc})")
    return check
