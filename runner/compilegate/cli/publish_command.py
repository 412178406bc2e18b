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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..errors import UsageError
from ..github.actions_env import PULL_REQUEST_EVENTS, ActionsContext
from ..github.event_fields import MissingEventField, event_text
from ..github.publish import make_client, publish
from ..github.rehearsal import load_saved_comments, load_saved_pull_request
from ..github.sticky_comment import GITHUB_ACTIONS_LOGIN
from ..report.annotations import annotations_for
from ..report.comment import render_comment
from ..report.links import LinkContext
from ..report.verdict_json import run_set_json
from .publish_acceptance import with_acceptance
from .report_commands import add_run_set_arguments, build_run_set, checked_marker

Loaded = TypeVar("Loaded")
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
        "needed; runs the real acceptance check on it and says what it would decide, and "
        "why",
    )
    cmd.add_argument(
        "--event-name",
        default="pull_request",
        metavar="NAME",
        help="with --event: the event the payload is of (default: pull_request)",
    )
    cmd.add_argument(
        "--saved-pull-request",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --dry-run: a saved answer of GET /repos/{owner}/{repo}/pulls/{number}, "
        "GitHub's view of the pull request the acceptance check reads (default: assumed "
        "from the event, and said)",
    )
    cmd.add_argument(
        "--saved-comments",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --dry-run: a saved answer of GET /repos/{owner}/{repo}/issues/{number}/"
        "comments (every page in one JSON list), where a fork's acceptance record is read "
        "(default: assumed none, and said)",
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
    saved = args.saved_pull_request or args.saved_comments
    if (args.event is not None or saved) and not args.dry_run:
        flag = "--event" if args.event is not None else "--saved-pull-request/--saved-comments"
        raise UsageError(
            f"{flag} FILE rehearses a publish: use it with --dry-run (a real publish reads "
            "the event GitHub gives the step, and asks GitHub)"
        )
    if args.event is not None:
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
    run_set = with_acceptance(
        context,
        build_run_set(args),
        dry_run=args.dry_run,
        record_author=author,
        saved_pull=_saved(args.saved_pull_request, load_saved_pull_request),
        saved_comments=_saved(args.saved_comments, load_saved_comments),
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


def _environ_of_event(path: Path, event_name: str) -> dict[str, str]:
    """The variables GitHub would give a step for this saved event: repository, API and
    server URLs from the payload's repository, the commit from its pull request. A key it
    lacks is named by its path (`repository.url`), in one line."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--event {path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise UsageError(f"--event {path}: not valid JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise UsageError(f"--event {path}: the event payload is not a JSON object")
    try:
        name = event_text(payload, "repository.full_name")
        api_url = event_text(payload, "repository.url").removesuffix(f"/repos/{name}")
        server_url = event_text(payload, "repository.html_url").removesuffix(f"/{name}")
        if event_name in PULL_REQUEST_EVENTS:
            sha = event_text(payload, "pull_request.head.sha")
        elif event_name == "workflow_run":
            sha = event_text(payload, "workflow_run.head_sha")
        else:
            sha = str(payload.get("after") or "0" * 40)
    except MissingEventField as exc:
        raise UsageError(
            f"--event {path}: not a usable {event_name} event payload: {exc}"
        ) from None
    return {
        "GITHUB_REPOSITORY": name,
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_SHA": sha,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": server_url,
    }


def _saved(path: Path | None, load: Callable[[Path], Loaded]) -> tuple[Path, Loaded] | None:
    """A saved GitHub answer for a dry run, read now: a bad one is a usage error first."""
    return None if path is None else (path, load(path))


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
