"""`compilegate report`: one document for a run set (many results, one baseline)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..config.pool_plan import read_planned_legs
from ..errors import BaselineMissing, UsageError
from ..gate.documents import read_document
from ..gate.run_set import (
    BASE_SUFFIX,
    RESULT_NAME,
    RunSetVerdict,
    find_results,
    judge_run_set,
)
from ..github.sticky_comment import comment_marker
from ..report.comment import render_comment
from ..report.first_screen import FirstScreen
from ..report.links import LinkContext
from ..report.run_set_text import render_run_set_text
from ..report.verdict_json import run_set_json

FORMATS = ("markdown", "text", "json")


def add_parser(subparsers: Any) -> None:
    report = subparsers.add_parser(
        "report",
        help="judge several results (one per PyTorch version) against a baseline, in one report",
        description=(
            "Compare each result with the baseline using the gate's rules and render one "
            "document grouped by PyTorch version. A missing or failed version is a row with "
            "its error. The exit code is the gate's: the most severe version decides."
        ),
    )
    add_run_set_arguments(report)
    report.add_argument("--format", choices=FORMATS, default="text")
    report.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the report here instead of standard output",
    )
    report.set_defaults(func=command_report)


def add_run_set_arguments(cmd: Any) -> None:
    """What names a run set (the results, the baseline) and its comment: report and publish."""
    cmd.add_argument(
        "--result",
        action="append",
        default=[],
        type=Path,
        metavar="PATH",
        help="a result document (repeatable)",
    )
    cmd.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a folder of results: torch-VERSION/result.json per version, or result*.json files",
    )
    cmd.add_argument(
        "--plan",
        type=Path,
        default=None,
        metavar="FILE",
        help="the matrix JSON `compilegate plan` printed: each leg is a folder RESULTS_DIR/LEG "
        "(its artifact), and a leg with none is a row saying it never ran",
    )
    cmd.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="PATH",
        help="the baseline every result is judged against",
    )
    cmd.add_argument(
        "--comment-key",
        default="default",
        metavar="KEY",
        help="the sticky comment's marker key (two workflows, two comments)",
    )
    cmd.add_argument(
        "--untrusted-results",
        action="store_true",
        help="the results are another run's artifact (a fork's): judged only against "
        "--baseline, never against a base document beside them (result.base.json); without "
        "--baseline, not judged (exit 4)",
    )


def build_run_set(args: argparse.Namespace) -> RunSetVerdict:
    baseline = None
    if args.baseline is not None:
        baseline = read_document(args.baseline, role="baseline")
    elif args.untrusted_results:
        # The fork wrote its artifact, base documents included: falling back to one would
        # let it pick what it is judged against.
        raise BaselineMissing(
            "no baseline: these results are another run's artifact (--untrusted-results), "
            "judged only against a trusted --baseline; a base document beside them "
            f"({RESULT_NAME.removesuffix('.json')}{BASE_SUFFIX}) is never read"
        )
    # A paired run's bases (result.base.json) judge its results unless a baseline is given.
    legs = read_planned_legs(args.plan) if args.plan is not None else ()
    sources = find_results(
        args.result, args.results_dir, paired_bases=baseline is None, planned_legs=legs
    )
    if baseline is None:
        baseline = next((s.baseline for s in sources if s.baseline is not None), None)
        where = next(
            (
                str(s.path.with_name(s.path.stem + BASE_SUFFIX))
                for s in sources
                if s.baseline is not None
            ),
            None,
        )
        return judge_run_set(sources, baseline, where)
    return judge_run_set(sources, baseline, str(args.baseline))


def links_from_environment(environ: dict[str, str] | None = None) -> LinkContext:
    """Links to the head commit and the run when inside GitHub Actions; none otherwise."""
    return LinkContext.from_environ(environ)


def render_run_set(run_set: RunSetVerdict, fmt: str, comment_key: str) -> str:
    if fmt == "json":
        return json.dumps(run_set_json(run_set), indent=1, allow_nan=False) + "\n"
    if fmt == "markdown":
        return render_comment(
            run_set, marker=checked_marker(comment_key), links=links_from_environment()
        )
    if fmt == "text":
        return render_run_set_text(run_set, links_from_environment())
    raise UsageError(f"--format {fmt}: expected one of {', '.join(FORMATS)}")


def checked_marker(comment_key: str) -> str:
    try:
        return comment_marker(comment_key)
    except ValueError as exc:
        raise UsageError(f"--comment-key: {exc}") from None


def command_report(args: argparse.Namespace) -> int:
    checked_marker(args.comment_key)  # a bad key is a usage error whatever the format
    if args.out is not None and args.out.is_dir():
        raise UsageError(f"--out {args.out}: is a directory; give a file path")
    run_set = build_run_set(args)
    text = render_run_set(run_set, args.format, args.comment_key)
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
        headline = FirstScreen.of(run_set).headline_line()
        sys.stdout.write(f"{headline}\nreport: {args.out}\n")
    return run_set.exit_code
