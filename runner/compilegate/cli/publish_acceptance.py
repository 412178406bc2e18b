"""`publish`'s acceptance: the run set with the regressions a maintainer's label accepts.

The real publish asks GitHub (github/acceptance.py); `publish --dry-run` runs the very same
check on the same event, with GitHub's answers read from saved payloads or assumed and
said (github/rehearsal.py), and says what the real one would decide, and why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..gate.run_set import RunSetVerdict
from ..github.acceptance import AcceptanceReader, check_acceptance
from ..github.actions_env import PULL_REQUEST_EVENTS, ActionsContext
from ..github.models import IssueComment, PullRequest
from ..github.publish import make_client
from ..github.rehearsal import RehearsedGitHub
from ..report.acceptance_words import (
    acceptance_words,
    labeller_trust_line,
    rehearsed_acceptance_line,
)

DRY = "compilegate publish --dry-run"


def with_acceptance(
    context: ActionsContext,
    run_set: RunSetVerdict,
    *,
    dry_run: bool = False,
    record_author: str | None = None,
    saved_pull: tuple[Path, PullRequest] | None = None,
    saved_comments: tuple[Path, tuple[IssueComment, ...]] | None = None,
) -> RunSetVerdict:
    """The run set with its regressions accepted where a maintainer applied the base side's
    label to this pull request, verified from the event and GitHub (github/acceptance.py);
    one line on stdout says what was accepted, or why not. A dry run accepts nothing: it
    says what the real check would decide, and what it assumed GitHub would answer."""
    labels = run_set.labels_to_accept()
    if not labels:
        return run_set
    if context.pull_request is None or context.event_path is None:
        sys.stdout.write("compilegate: no acceptance: this event names no pull request\n")
        return run_set
    try:
        loaded = json.loads(context.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.stdout.write(f"compilegate: no acceptance: GITHUB_EVENT_PATH unreadable ({exc})\n")
        return run_set
    payload = loaded if isinstance(loaded, dict) else {}
    number = context.pull_request.number
    if dry_run:
        for label in labels:
            rehearsal = RehearsedGitHub(
                context.event_name,
                payload,
                label,
                saved_pull=saved_pull,
                saved_comments=saved_comments,
            )
            _rehearse(context, run_set, payload, label, rehearsal, record_author)
        return run_set
    client: AcceptanceReader | None = make_client(context)
    acceptances = []
    for label in labels:
        check = check_acceptance(
            context.event_name,
            payload,
            label,
            client,
            context.repository,
            number,
            record_author=record_author,
        )
        if check.acceptance is None:
            sys.stdout.write(f'compilegate: "{label}" accepts nothing: {check.why_not}\n')
        else:
            acceptances.append(check.acceptance)
            accepted = acceptance_words(check.acceptance)
            sys.stdout.write(f"compilegate: regressions accepted by {accepted}\n")
    return run_set.accepted(acceptances)


def _rehearse(
    context: ActionsContext,
    run_set: RunSetVerdict,
    payload: dict[str, object],
    label: str,
    rehearsal: RehearsedGitHub,
    record_author: str | None,
) -> None:
    """The real check on the event, against the rehearsed GitHub: what it assumed, what it
    took from the event, and what it decided."""
    assert context.pull_request is not None
    sys.stdout.write(
        f'{DRY}: checking "{label}" as the real publish would, on the '
        f"{context.event_name} event in {context.event_path}\n"
    )
    check = check_acceptance(
        context.event_name,
        payload,
        label,
        rehearsal,
        context.repository,
        context.pull_request.number,
        record_author=record_author,
    )
    for note in rehearsal.notes:
        sys.stdout.write(f"{DRY}: {note}\n")
    sender = payload.get("sender")
    if (
        context.event_name in PULL_REQUEST_EVENTS
        and rehearsal.notes  # the claim stood until GitHub was asked
        and isinstance(sender, dict)
        and isinstance(sender.get("login"), str)
    ):
        sys.stdout.write(f"{DRY}: {labeller_trust_line(sender['login'])}\n")
    after = run_set if check.acceptance is None else run_set.accepted([check.acceptance])
    line = rehearsed_acceptance_line(
        label,
        check.acceptance,
        check.why_not,
        verdict_before=run_set.overall,
        verdict_after=after.overall,
        exit_before=run_set.exit_code,
        exit_after=after.exit_code,
    )
    sys.stdout.write(f"{DRY}: {line}\n")
