"""`compilegate publish`: the report where a GitHub user sees it (comment, summary, annotations).

Runs in the job step that alone holds the token. It re-renders the report from the result
documents, each validated against the schema: markdown written by pull-request code is never
posted. Posting problems are reported and never change the exit code, which is the gate's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gate.run_set import RunSetVerdict
from ..gate.verdict import Acceptance
from ..github.acceptance import check_acceptance
from ..github.actions_env import ActionsContext
from ..github.publish import make_client, publish
from ..github.sticky_comment import GITHUB_ACTIONS_LOGIN
from ..report.acceptance_words import acceptance_words
from ..report.annotations import annotations_for
from ..report.comment import render_comment
from ..report.links import LinkContext
from ..report.verdict_json import run_set_json
from .report_commands import add_run_set_arguments, build_run_set, checked_marker

_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,98})(?:\[bot\])?")


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "publish",
        help="post the sticky PR comment, job summary, annotations and outputs (GitHub Actions)",
        description=(
            "Inside GitHub Actions: judge the results against the baseline, append the report "
            "to the job summary, print annotations at new graph breaks and recompiles, upsert "
            "the sticky comment on the pull request, and write the step outputs. Regressions are "
            "accepted (exit 0) where a maintainer applied the baseline's accept_label to the "
            "pull request, verified from the event and GitHub. Outside a pull "
            "request the comment is skipped, and said so. In a workflow_run job the results "
            "are judged as --untrusted-results."
        ),
    )
    add_run_set_arguments(cmd)
    cmd.add_argument(
        "--token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="the environment variable holding the token (default: GITHUB_TOKEN)",
    )
    cmd.add_argument(
        "--pr",
        type=int,
        default=None,
        metavar="NUMBER",
        help="the pull request to comment on, when the event names none",
    )
    cmd.add_argument(
        "--pr-from-workflow-run",
        action="store_true",
        help="in a workflow_run job: comment on the open pull request whose head commit and "
        "head repository are the triggering run's (only for a successful pull_request run)",
    )
    cmd.add_argument(
        "--report-out",
        type=Path,
        default=None,
        metavar="PATH",
        help="where to keep the markdown report (default: RESULTS_DIR/report.md)",
    )
    add_comment_author_argument(cmd)
    cmd.add_argument("--no-comment", action="store_true", help="everything but the PR comment")
    cmd.add_argument(
        "--dry-run", action="store_true", help="print what would be sent; send nothing"
    )
    cmd.add_argument(
        "--event",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --dry-run: a saved event payload (e.g. a pull_request `labeled` event): "
        "the repository, pull request and commit are read from it, no GITHUB_* variables "
        "needed; says what the accept label would change",
    )
    cmd.add_argument(
        "--event-name",
        default="pull_request",
        metavar="NAME",
        help="with --event: the event the payload is of (default: pull_request)",
    )
    cmd.set_defaults(func=command_publish)


def add_comment_author_argument(cmd: Any) -> None:
    """`--comment-author LOGIN`: who the token comments as (publish, record-acceptance)."""
    cmd.add_argument(
        "--comment-author",
        default=GITHUB_ACTIONS_LOGIN,
        metavar="LOGIN",
        help=f"the login the token comments as (default: {GITHUB_ACTIONS_LOGIN}, "
        "GITHUB_TOKEN's; an App's token: <app-slug>[bot]): only a marked comment it wrote is "
        "updated, and an acceptance record counts only when it wrote it",
    )


def checked_comment_author(login: str) -> str:
    """The --comment-author login, or a usage error naming it."""
    if not _LOGIN.fullmatch(login):
        raise UsageError(
            f"--comment-author {login!r}: not a GitHub login (letters, digits and -, "
            "an App's ending in [bot])"
        )
    return login


def command_publish(args: argparse.Namespace) -> int:
    checked_marker(args.comment_key)  # a bad key is a usage error before anything runs
    author = checked_comment_author(args.comment_author)
    environ: Mapping[str, str] = os.environ
    if args.event is not None:
        if not args.dry_run:
            raise UsageError(
                "--event FILE rehearses a publish: use it with --dry-run (a real publish reads "
                "the event GitHub gives the step)"
            )
        environ = {**_environ_of_event(args.event, args.event_name), args.token_env: ""}
    context = ActionsContext.from_environ(environ, token_env=args.token_env)
    if args.pr is not None:
        if args.pr < 1:
            raise UsageError(f"--pr {args.pr}: expected a pull request number")
        context = context.for_pull_request(args.pr)
    post_comment = not args.no_comment
    # A workflow_run job publishes another run's artifact (fork-publish.yml: a fork's): its
    # base documents are the fork's too, so only --baseline may judge it.
    if args.pr_from_workflow_run or context.event_name == "workflow_run":
        args.untrusted_results = True
    if args.pr_from_workflow_run:
        context, why_not = _pull_request_of_the_run(context)
        if why_not:
            sys.stdout.write(f"compilegate: no comment: {why_not}\n")
            post_comment = False
    run_set = _with_acceptance(
        context, build_run_set(args), dry_run=args.dry_run, record_author=author
    )
    links = dataclasses.replace(
        LinkContext.from_environ(os.environ),
        server_url=context.server_url,
        repository=context.repository,
        head_sha=context.head_sha,
    )
    markdown = render_comment(run_set, links=links)
    report_path = _keep_report(args, run_set, markdown)
    publish(
        context,
        make_client(context) if post_comment else None,
        markdown=markdown,
        comment_key=args.comment_key,
        annotations=annotations_for(run_set),
        verdict=run_set.overall,
        report_path=str(report_path),
        dry_run=args.dry_run,
        stream=sys.stdout,
        comment_author_login=author,
        post_comment=post_comment,
    )
    return run_set.exit_code


def _with_acceptance(
    context: ActionsContext,
    run_set: RunSetVerdict,
    *,
    dry_run: bool = False,
    record_author: str | None = None,
) -> RunSetVerdict:
    """The run set with its regressions accepted where a maintainer applied the base side's
    label to this pull request, verified from the event and GitHub (github/acceptance.py);
    one line on stdout says what was accepted, or why not."""
    labels = run_set.labels_to_accept()
    if not labels:
        return run_set
    if context.pull_request is None or context.event_path is None:
        sys.stdout.write("compilegate: no acceptance: this event names no pull request\n")
        return run_set
    try:
        payload = json.loads(context.event_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.stdout.write(f"compilegate: no acceptance: GITHUB_EVENT_PATH unreadable ({exc})\n")
        return run_set
    if dry_run:
        sys.stdout.write(
            f"compilegate publish --dry-run: would check {', '.join(labels)} with GET "
            f"/repos/{context.repository}/pulls/{context.pull_request.number}\n"
        )
        for label in labels:
            rehearsed = run_set.accepted([Acceptance(label, "maintainer", context.head_sha)])
            sys.stdout.write(
                f'compilegate publish --dry-run: "{label}" applied by a maintainer at '
                f"{context.head_sha[:12]} would make the verdict {run_set.overall} → "
                f"{rehearsed.overall} (exit {run_set.exit_code} → {rehearsed.exit_code}); "
                f'"{label}: METRIC, …" accepts only the rows it names\n'
            )
        return run_set
    client = make_client(context)
    acceptances = []
    for label in labels:
        check = check_acceptance(
            context.event_name,
            payload if isinstance(payload, dict) else {},
            label,
            client,
            context.repository,
            context.pull_request.number,
            record_author=record_author,
        )
        if check.acceptance is None:
            sys.stdout.write(f'compilegate: "{label}" accepts nothing: {check.why_not}\n')
        else:
            acceptances.append(check.acceptance)
            accepted = acceptance_words(check.acceptance)
            sys.stdout.write(f"compilegate: regressions accepted by {accepted}\n")
    return run_set.accepted(acceptances)


def _environ_of_event(path: Path, event_name: str) -> dict[str, str]:
    """The variables GitHub would give a step for this saved event: repository, API and
    server URLs from the payload's repository, the commit from its pull request."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        repository = payload["repository"]
        name = str(repository["full_name"])
        api_url = str(repository["url"]).removesuffix(f"/repos/{name}")
        server_url = str(repository["html_url"]).removesuffix(f"/{name}")
        pull = payload.get("pull_request") or {}
        sha = str((pull.get("head") or {}).get("sha") or payload.get("after") or "0" * 40)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"--event {path}: not a usable event payload ({exc!r})") from None
    return {
        "GITHUB_REPOSITORY": name,
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_SHA": sha,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": server_url,
    }


def _keep_report(args: argparse.Namespace, run_set: Any, markdown: str) -> Path:
    """The markdown and the JSON verdict beside the results (what the artifact uploads)."""
    folder = args.results_dir or (args.result[0].parent if args.result else Path("."))
    path = args.report_out or folder / "report.md"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown, encoding="utf-8")
        path.with_suffix(".json").write_text(
            json.dumps(run_set_json(run_set), indent=1, allow_nan=False) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return path


def _pull_request_of_the_run(context: ActionsContext) -> tuple[ActionsContext, str | None]:
    """The context aimed at the pull request a `workflow_run` event's run measured, found
    from what GitHub says about the run (never from its artifacts, which the pull request
    wrote): the open pull request of this repository whose head commit is the run's head SHA
    and whose head repository is the run's. Exactly one, or no comment."""
    if context.event_name != "workflow_run" or context.event_path is None:
        raise UsageError("--pr-from-workflow-run: this is not a workflow_run event")
    try:
        run = json.loads(context.event_path.read_text(encoding="utf-8"))["workflow_run"]
        event, conclusion = run["event"], run["conclusion"]
        head_sha, head_branch = str(run["head_sha"]), str(run["head_branch"])
        head_repo = str((run.get("head_repository") or {})["full_name"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"GITHUB_EVENT_PATH: not a usable workflow_run payload ({exc!r})"
        ) from None
    if event != "pull_request":
        return context, f"the triggering run was started by {event}, not by a pull request"
    if conclusion != "success":
        return context, f"the triggering run concluded {conclusion}"
    client = make_client(context)
    if client is None:
        return context, f"no token in the environment to find the pull request of {head_sha[:12]}"
    owner = head_repo.split("/")[0]
    found = [
        pr
        for pr in client.list_open_pull_requests(context.repository, head=f"{owner}:{head_branch}")
        if pr.head_sha == head_sha and pr.head_repo_full_name == head_repo
    ]
    if len(found) != 1:
        return context, (
            f"{len(found)} open pull requests have head {head_repo}@{head_sha[:12]}; "
            "expected exactly one"
        )
    return context.for_pull_request(found[0].number, head_sha=head_sha), None
