"""`compilegate record-acceptance`: a fork's labelling, recorded where the label is applied.

Runs in fork-publish.yml's `pull_request_target` job on `labeled` (the base branch's
workflow: it checks out and runs no pull-request code). The label is verified from the event
and GitHub as `publish` verifies it (github/acceptance.py) and recorded on the pull request
at the commit labelled (github/acceptance_record.py), so the fork's later `workflow_run`
publish accepts that commit and no later one. The label the base side accepts with is the
stored baseline's (`--baseline`, fetched from the default branch): nothing the fork wrote.
Not recording is no failure of the job: one line says why, exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gate.acceptance import accept_label_of
from ..gate.documents import read_document
from ..github.acceptance import record_acceptance
from ..github.actions_env import ActionsContext
from ..github.publish import make_client
from ..report.acceptance_words import acceptance_words
from .publish_command import add_comment_author_argument, checked_comment_author


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "record-acceptance",
        help="record a maintainer's accept label on a fork's pull request (pull_request_target)",
        description=(
            "In a pull_request_target job started by `labeled` (fork-publish.yml): verify that "
            "a maintainer applied the baseline's accept_label, and record it on the pull "
            "request at the commit labelled, for the fork's workflow_run publish. A later push "
            "needs the label applied again."
        ),
    )
    cmd.add_argument(
        "--baseline",
        type=Path,
        required=True,
        metavar="PATH",
        help="the default branch's baseline: its accept_label is the one recorded",
    )
    cmd.add_argument(
        "--token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="the environment variable holding the token (default: GITHUB_TOKEN)",
    )
    add_comment_author_argument(cmd)
    cmd.set_defaults(func=command_record_acceptance)


def command_record_acceptance(args: argparse.Namespace) -> int:
    author = checked_comment_author(args.comment_author)
    context = ActionsContext.from_environ(os.environ, token_env=args.token_env)
    accept_label = accept_label_of(read_document(args.baseline, role="baseline"))
    if accept_label is None:
        return _said("nothing recorded: the baseline turns acceptance off (accept_label: null)")
    if context.pull_request is None or context.event_path is None:
        return _said(f"nothing recorded: a {context.event_name} event names no pull request")
    try:
        payload = json.loads(context.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: unreadable ({exc})") from None
    check = record_acceptance(
        context.event_name,
        payload if isinstance(payload, dict) else {},
        accept_label,
        make_client(context),
        context.repository,
        context.pull_request.number,
        record_author=author,
    )
    if check.acceptance is None:
        return _said(f"nothing recorded: {check.why_not}")
    return _said(f"recorded: regressions accepted by {acceptance_words(check.acceptance)}")


def _said(line: str) -> int:
    sys.stdout.write(f"compilegate: {line}\n")
    return 0
