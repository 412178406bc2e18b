"""The regression-gate commands: `compilegate compare` and `compilegate baseline update`.

Each handler returns the exit code (errors.EXIT_CODES; which verdict fails the job:
gate/verdict.py) and raises CompilegateError subclasses for bad input, which cli.main()
turns into one line. The comparison and its rendering are report/judge_and_render.py's,
which `compilegate run --baseline` calls too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, UsageError
from ..gate.baseline import update_baseline
from ..gate.class_baselines import class_baseline
from ..gate.documents import read_document
from ..gate.policy import validate_threshold_override
from ..report.baseline_update_words import baseline_update_summary
from ..report.judge_and_render import FORMATS, compare_documents


def add_parser(subparsers: Any) -> None:
    """Register `compare` and `baseline update` on the CLI's subparsers object."""
    compare = subparsers.add_parser(
        "compare",
        help="compare a result with a baseline; exit 1 on a regression, 4 when not judged",
        description=(
            "Judge every step, variant and metric of a result against a baseline, under the "
            "baseline's thresholds (a result cannot loosen them). A speed change is a "
            "regression only when it exceeds both its threshold and the noise both runs "
            "measured; otherwise it is inconclusive (shown, not failing). Anything of the "
            "baseline that cannot be judged (missing, removed, incomparable) fails."
        ),
    )
    compare.add_argument(
        "--baseline",
        required=True,
        type=Path,
        metavar="PATH",
        help="baseline document (a result accepted from the default branch); the result's "
        "hardware class's own file beside it is used when there is one (docs/baselines.md)",
    )
    compare.add_argument(
        "--result", required=True, type=Path, metavar="PATH", help="result document of this run"
    )
    compare.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the verdicts as JSON to PATH (atomically)",
    )
    compare.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="what to print: table (default), markdown or json",
    )
    compare.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a threshold for every step, e.g. speedup_drop_pct=10 (repeatable; "
        "the operator's: the baseline's thresholds apply otherwise)",
    )
    compare.set_defaults(func=command_compare)

    baseline = subparsers.add_parser("baseline", help="manage the stored baseline")
    actions = baseline.add_subparsers(dest="baseline_command", metavar="ACTION")
    actions.required = True
    update = actions.add_parser(
        "update",
        help="merge a result into the baseline (atomically; keeps steps not re-run)",
        description=(
            "Write the result as the new baseline. Its steps replace same-named ones; "
            "baseline steps it did not run are kept; a step or variant that failed (or came "
            "back incomplete) in the result keeps its previous baseline. A result measured on "
            "an unsteady machine (its run health) is recorded with its step times marked as "
            "not vouched for: its counts, graph breaks, recompiles, numerics, memory and "
            "speedups gate pull requests as usual, its step times only once a steady run "
            "replaces them or the baseline's history of steady runs judges them."
        ),
    )
    update.add_argument(
        "--result", required=True, type=Path, metavar="PATH", help="result document to accept"
    )
    update.add_argument(
        "--baseline",
        required=True,
        type=Path,
        metavar="PATH",
        help="baseline file to create or update; a result of another hardware class than it "
        "holds goes into that class's own file beside it (docs/baselines.md)",
    )
    update.add_argument(
        "--force",
        action="store_true",
        help="vouch for the step times of a result measured on an unsteady machine: recorded "
        "unmarked, they gate pull requests and join the history like a steady run's",
    )
    update.set_defaults(func=command_baseline_update)

    fetch = actions.add_parser(
        "fetch",
        help="download the default branch's baseline artifact, provenance checked (GitHub Actions)",
        description=(
            "Find the newest successful push, schedule or workflow_dispatch run of the baseline "
            "workflow on --branch (default: the repository's default branch) whose head "
            "repository is this one, take its unexpired artifact NAME, check it against the "
            "baseline schema and write it to --out. No such run: exit 4, saying how to create "
            "one. Reads GITHUB_API_URL, GITHUB_REPOSITORY and the token."
        ),
    )
    fetch.add_argument("--artifact", required=True, metavar="NAME")
    fetch.add_argument(
        "--workflow",
        default="baseline-refresh.yml",
        metavar="FILE",
        help="the workflow that records the baseline: file name or id "
        "(default: baseline-refresh.yml)",
    )
    fetch.add_argument(
        "--branch",
        default=None,
        metavar="BRANCH",
        help="the branch the baseline is recorded on (default: the repository's default branch)",
    )
    fetch.add_argument("--out", required=True, type=Path, metavar="PATH")
    fetch.add_argument("--token-env", default="GITHUB_TOKEN", metavar="NAME")
    fetch.set_defaults(func=command_baseline_fetch)


def command_compare(args: argparse.Namespace) -> int:
    override = parse_threshold_args(args.threshold)
    baseline = read_document(args.baseline, role="baseline")
    result = read_document(args.result, role="result")
    # The result's hardware class's own baseline, when one lies beside the named file.
    baseline, baseline_path = class_baseline(Path(args.baseline), baseline, result)
    paths = (args.result, baseline_path)
    return compare_documents(baseline, result, args.out, sys.stdout, args.format, override, paths)


def command_baseline_fetch(args: argparse.Namespace) -> int:
    import os

    import requests

    from ..github.baseline_fetch import fetch_baseline
    from ..github.client import GitHubClient

    repo = os.environ.get("GITHUB_REPOSITORY")
    token = os.environ.get(args.token_env)
    if not repo:
        raise UsageError("baseline fetch: GITHUB_REPOSITORY is not set (owner/name)")
    if not token:
        raise UsageError(f"baseline fetch: no token in {args.token_env}")
    api_url = os.environ.get("GITHUB_API_URL")
    if not api_url:
        raise UsageError("baseline fetch: GITHUB_API_URL is not set (GitHub Actions sets it)")
    client = GitHubClient(requests.Session(), api_url, token)
    line = fetch_baseline(
        client, repo, args.artifact, args.branch, args.out, workflow=args.workflow
    )
    sys.stdout.write(line + "\n")
    return EXIT_OK


def command_baseline_update(args: argparse.Namespace) -> int:
    update = update_baseline(args.result, args.baseline, force=args.force)
    sys.stdout.write(baseline_update_summary(update) + "\n")
    return EXIT_OK


def parse_threshold_args(items: list[str]) -> dict[str, float]:
    """`["speedup_drop_pct=10"]` → `{"speedup_drop_pct": 10.0}`; UsageError otherwise."""
    parsed: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            parsed[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise UsageError(f"--threshold {item}: expected NAME=NUMBER, e.g. speedup_drop_pct=10")
    return validate_threshold_override(parsed)
