"""Whether a maintainer accepted this run's regressions: the base branch's label, verified.

gate/acceptance.py turns regression rows into `accepted` for an `Acceptance`; this module
decides whether there is one, from the event GitHub sent the job and from GitHub's own view
of the pull request, never from anything the pull request wrote (its config, its result
documents, its branch name):

    pull_request /             action `labeled`, the label the base side names
    pull_request_target        (`accept_label`), applied by a User (not a Bot), not by the
                               pull request's author
    workflow_run               (fork-publish.yml) the triggering run came from a
                               `pull_request` event, was started by a User who also
                               triggered it (`actor` == `triggering_actor`: not a re-run of
                               the author's run), who is not the pull request's author
    both                       GET /repos/{owner}/{repo}/pulls/{pull_number} now: the pull
                               request is open, carries the label, and its head commit is the
                               one measured (a later push needs the label applied again)

GitHub lets only people with triage rights or more on the repository apply a label, so a
`labeled` event by someone other than the author is a maintainer's. Who applied the label
cannot be confirmed through the API this project uses (the contract has no issue-events or
collaborator-permission endpoint): for a `workflow_run` the event that started the run is
known only as `pull_request`, not as `labeled`. docs/security.md states the gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..gate.acceptance import Acceptance, label_accepts
from .client import GitHubClient
from .errors import GitHubError

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


@dataclass(frozen=True)
class AcceptanceCheck:
    """An acceptance, or why there is none (one line for the job log and the report)."""

    acceptance: Acceptance | None
    why_not: str | None = None


def check_acceptance(
    event_name: str,
    payload: Mapping[str, Any],
    accept_label: str,
    client: GitHubClient | None,
    repository: str,
    pull_number: int,
) -> AcceptanceCheck:
    """Whether `accept_label` on pull request `pull_number` accepts this run's regressions."""
    try:
        claimed = _claim(event_name, payload, accept_label)
    except (KeyError, TypeError, ValueError) as exc:
        return AcceptanceCheck(None, f"the {event_name} payload is not usable ({exc!r})")
    if isinstance(claimed, str):
        return AcceptanceCheck(None, claimed)
    login, head_sha, author, applied = claimed
    if client is None:
        return AcceptanceCheck(None, "no token to confirm the label with GitHub")
    try:
        pull = client.get_pull_request(repository, pull_number)
    except GitHubError as exc:
        return AcceptanceCheck(None, f"could not read pull request #{pull_number} ({exc})")
    author = pull.author_login or author
    if pull.state != "open":
        return AcceptanceCheck(None, f"pull request #{pull_number} is {pull.state}")
    # The label the event applied; for a fork's run (no label in its payload) the accept
    # label on the pull request, alone or else naming rows.
    carried = [label for label in pull.labels if label_accepts(label, accept_label)]
    label = applied or (accept_label if accept_label in carried else next(iter(carried), None))
    if label is None or label not in pull.labels:
        missing = applied or accept_label
        return AcceptanceCheck(None, f'pull request #{pull_number} does not carry "{missing}"')
    if pull.head_sha != head_sha:
        return AcceptanceCheck(
            None,
            f"pull request #{pull_number} moved to {pull.head_sha[:12]} after the measured "
            f"commit {head_sha[:12]}: apply the label again",
        )
    if author is None or login == author:
        return AcceptanceCheck(
            None, f"@{login} wrote the pull request: its author cannot accept it"
        )
    return AcceptanceCheck(Acceptance(label=label, login=login))


def _claim(
    event_name: str, payload: Mapping[str, Any], accept_label: str
) -> tuple[str, str, str | None, str | None] | str:
    """(who applied the label, the measured head commit, the author as the event says, the
    label applied when the event says), or why the event claims no acceptance."""
    if event_name in PULL_REQUEST_EVENTS:
        if payload.get("action") != "labeled":
            return f"a {event_name} event of action {payload.get('action')!r}, not `labeled`"
        label = str(payload["label"]["name"])
        if not label_accepts(label, accept_label):
            return f'the label applied is "{label}", not "{accept_label}"'
        sender = payload["sender"]
        if sender.get("type") != "User":
            kind, login = sender.get("type"), sender.get("login")
            return f"the label was applied by {kind} @{login}, not by a person"
        pull = payload["pull_request"]
        return str(sender["login"]), str(pull["head"]["sha"]), pull["user"]["login"], label
    if event_name == "workflow_run":
        run = payload["workflow_run"]
        if run["event"] != "pull_request":
            return f"the triggering run was started by {run['event']}, not by a pull request"
        actor, triggering = run["actor"], run.get("triggering_actor") or run["actor"]
        if triggering.get("type") != "User":
            return f"the triggering run was started by {triggering.get('type')}, not a person"
        if actor["login"] != triggering["login"]:
            return (
                f"the triggering run is @{triggering['login']}'s re-run of @{actor['login']}'s: "
                "only a run a labelling started accepts"
            )
        return str(actor["login"]), str(run["head_sha"]), None, None
    return f"a {event_name} event cannot accept"
