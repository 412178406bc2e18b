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
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..github.actions_env import ActionsContext
from ..github.publish import make_client, publish
from ..report.annotations import annotations_for
from ..report.comment import render_comment
from ..report.links import LinkContext
from .report_commands import add_run_set_arguments, build_run_set, checked_marker


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "publish",
        help="post the sticky PR comment, job summary, annotations and outputs (GitHub Actions)",
        description=(
            "Inside GitHub Actions: judge the results against the baseline, append the report "
            "to the job summary, print annotations at new graph breaks and recompiles, upsert "
            "the sticky comment on the pull request, and write the step outputs. Outside a pull "
            "request the comment is skipped, and said so."
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
        "--report-out",
        type=Path,
        default=None,
        metavar="PATH",
        help="where to keep the markdown report (default: RESULTS_DIR/report.md)",
    )
    cmd.add_argument("--no-comment", action="store_true", help="everything but the PR comment")
    cmd.add_argument(
        "--dry-run", action="store_true", help="print what would be sent; send nothing"
    )
    cmd.set_defaults(func=command_publish)


def command_publish(args: argparse.Namespace) -> int:
    checked_marker(args.comment_key)  # a bad key is a usage error before anything runs
    context = ActionsContext.from_environ(os.environ, token_env=args.token_env)
    if args.pr is not None:
        if args.pr < 1:
            raise UsageError(f"--pr {args.pr}: expected a pull request number")
        context = context.for_pull_request(args.pr)
    run_set = build_run_set(args)
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
        None if args.no_comment else make_client(context),
        markdown=markdown,
        comment_key=args.comment_key,
        annotations=annotations_for(run_set),
        verdict=run_set.overall,
        report_path=str(report_path),
        dry_run=args.dry_run,
        stream=sys.stdout,
        post_comment=not args.no_comment,
    )
    return run_set.exit_code


def _keep_report(args: argparse.Namespace, run_set: Any, markdown: str) -> Path:
    """The markdown and the JSON verdict beside the results (what the artifact uploads)."""
    folder = args.results_dir or (args.result[0].parent if args.result else Path("."))
    path = args.report_out or folder / "report.md"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(markdown, encoding="utf-8")
        path.with_suffix(".json").write_text(
            json.dumps(run_set.to_dict(), indent=1, allow_nan=False) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the report: {exc.strerror or exc}") from None
    return path
