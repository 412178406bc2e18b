"""`compilegate bisect`: the commit at which each moved count first changed (results/bisect.py
says how; run/bisect_*.py search and probe).

Exit codes of bisect (the table's codes, with their meaning here):
    0  every moved count's first commit found, or nothing moved (one line)
    2  usage: a bad revision, the good end not on the bad end's first-parent history, an
       unknown --count, an unreadable config or --against document
    3  an end could not be counted (its step does not import or raises): nothing to bisect
    4  a change lies among skipped commits: the answer names the candidates, not one commit
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    EXIT_NOT_JUDGED,
    EXIT_OK,
    EXIT_RUN_ERROR,
    EXIT_USAGE,
    RunInterrupted,
    UsageError,
)
from ..results.bisect import CommitCounts
from .images_command import add_keep_images_argument
from .matrix_command import BUILD_NETWORK_ENV

if TYPE_CHECKING:
    from ..config import Config
    from ..results.bisect import Commit, ProbeRecord
    from ..results.model import ResultDocument
    from ..run.launcher import Launcher

BISECT_EXIT_CODES = {
    EXIT_OK: "every moved count's first commit found, or nothing moved",
    EXIT_USAGE: "usage: a bad revision or flag, an unreadable config or --against document",
    EXIT_RUN_ERROR: "an end could not be counted: nothing to bisect",
    EXIT_NOT_JUDGED: "a change lies among skipped commits: candidates named, not one commit",
}


def add_parser(commands: Any) -> None:
    from ..results.bisect import COUNT_NAMES

    cmd = commands.add_parser(
        "bisect",
        help="find the commit at which a count moved (counting pass only, no timing)",
        description="Bisect first-parent history for the commit at which each count that "
        "moved between two ends first changed: one untimed counting pass per probed commit, "
        "each in a fresh worktree, on this interpreter, under this checkout's config.",
        epilog="exit codes: "
        + "; ".join(f"{code} {text}" for code, text in BISECT_EXIT_CODES.items()),
    )
    ends = cmd.add_mutually_exclusive_group(required=True)
    ends.add_argument("--good", metavar="REV", help="a commit whose counts are the old ones")
    ends.add_argument(
        "--against",
        metavar="BASELINE",
        type=Path,
        help="a stored result document (a baseline) as the good end: its counts, at the "
        "commit it records (same torch as this interpreter)",
    )
    cmd.add_argument("--bad", metavar="REV", default="HEAD", help="the commit whose counts "
                     "moved (default: HEAD)")  # fmt: skip
    cmd.add_argument(
        "--count",
        action="append",
        default=[],
        metavar="NAME",
        choices=COUNT_NAMES,
        help="follow this count (repeatable; default: every count that moved between the "
        f"ends): {', '.join(COUNT_NAMES)}",
    )
    cmd.add_argument(
        "--config", default="compilegate.yml", type=Path, help="config file (default: "
        "compilegate.yml): its steps and settings apply to every probed commit",
    )  # fmt: skip
    cmd.add_argument("--repo", type=Path, default=None, help="repository root for entries "
                     "(default: the config's folder)")  # fmt: skip
    cmd.add_argument("--step", action="append", default=[], metavar="NAME",
                     help="bisect only this step (repeatable; default: every step)")  # fmt: skip
    cmd.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter that imports torch and runs the steps (default: this one)",
    )
    cmd.add_argument(
        "--backend",
        choices=("host", "docker"),
        default="host",
        help="where each probe's children run: host (this machine, as your user: trusted "
        "commits only) or docker (one fresh container per child of the --torch version's "
        "image, as `matrix --against` runs them: repository read-only, no network)",
    )
    cmd.add_argument("--torch", metavar="VERSION", default=None,
                     help="--backend docker: the PyTorch version whose image counts")  # fmt: skip
    cmd.add_argument("--base-image", default=None, metavar="IMAGE",
                     help="--backend docker: what the version's image is built on")  # fmt: skip
    cmd.add_argument("--index-url", default=None, metavar="URL",
                     help="--backend docker: where torch is installed from")  # fmt: skip
    cmd.add_argument("--gpus", default=None, metavar="SPEC",
                     help="--backend docker: GPUs as `docker run --gpus` takes them")  # fmt: skip
    cmd.add_argument(
        "--build-network",
        default=os.environ.get(BUILD_NETWORK_ENV) or "default",
        metavar="NETWORK",
        help="--backend docker: the network the image build uses (as matrix's)",
    )
    add_keep_images_argument(cmd)
    cmd.add_argument(
        "--summary",
        type=Path,
        default=None,
        metavar="FILE",
        help="also append the answer as markdown to FILE (e.g. $GITHUB_STEP_SUMMARY)",
    )
    cmd.add_argument("--one-at-a-time", action="store_true", help="start each counting "
                     "process only when its turn comes")  # fmt: skip
    cmd.add_argument("--verbose", action="store_true", help="also show each child's output")
    cmd.set_defaults(func=command_bisect)


def command_bisect(args: argparse.Namespace) -> int:
    from ..config.loading import load_config_file
    from ..gate.documents import read_document
    from ..run.bisect_history import first_parent_range
    from ..run.checkout_credentials import refuse_persisted_credentials
    from ..run.interrupts import signals_interrupt_the_run
    from ..run.launcher import ChildLauncher, close_launcher
    from .run_command import _check_python, refuse_opted_in_credentials

    config = load_config_file(args.config, repo_root=args.repo).select(args.step)
    refuse_persisted_credentials(config.repo_root)
    refuse_opted_in_credentials(args.config, config)
    # Every usage error before an image is built or a child started: the ends first.
    baseline = None
    if args.against is not None:
        baseline = read_document(args.against, role="baseline")
        good, option = baseline.environment.commit, "--against"
        if not good:
            raise UsageError(
                f"--against {args.against}: environment.commit is not recorded; give --good"
            )
    else:
        good, option = args.good, "--good"
    commits = first_parent_range(config.repo_root, good, args.bad, option)
    launcher: Launcher
    if args.backend == "docker":
        launcher = _container_launcher(args)
    elif args.torch is not None:
        raise UsageError("--torch: only with --backend docker (the host's torch is --python's)")
    else:
        launcher = ChildLauncher(
            python=_check_python(args.python),
            show_output=args.verbose,
            stream=sys.stderr,
            ahead=not args.one_at_a_time,
        )
    try:
        with signals_interrupt_the_run():
            given = _against(args.against, baseline, config, launcher) if baseline else None
            return _bisect(args, config, launcher, commits, given)
    except RunInterrupted as stop:
        sys.stderr.write(f"compilegate: {stop}\n")
        return stop.exit_code
    finally:
        close_launcher(launcher)


def _bisect(
    args: argparse.Namespace,
    config: Config,
    launcher: Launcher,
    commits: list[Commit],
    given: CommitCounts | None,
) -> int:
    """Probe both ends (`given`: the good end's counts from a stored document), then search
    for each moved count's changes; print the answer; the exit code (module docstring)."""
    from ..report import bisect_words as words
    from ..results.bisect import moved_keys
    from ..run.bisect_probe import CommitProbe
    from ..run.bisect_search import Search

    def heard(number: int, record: ProbeRecord) -> None:
        sys.stderr.write(words.probe_words(number, record) + "\n")
        sys.stderr.flush()

    search = Search(commits, CommitProbe(config, launcher), on_record=heard)
    if given is not None:
        search.give(0, given)
    last = len(commits) - 1
    ends = []
    for which, index in (("good", 0), ("bad", last)):
        outcome = search.at(index)
        if not isinstance(outcome, CommitCounts):
            reason = outcome.reason
            sys.stderr.write(words.end_failed_words(which, commits[index], reason) + "\n")
            return EXIT_RUN_ERROR
        ends.append(outcome)
    keys = moved_keys(ends[0], ends[1], tuple(args.count))
    if not keys:
        line = words.nothing_moved_words(
            commits[0], commits[last], tuple(args.count), search.records
        )
        _answer([line], args.summary, commits)
        return EXIT_OK
    changes = [change for key in keys for change in search.changes(key)]
    position = {commit.sha: i for i, commit in enumerate(commits)}
    changes.sort(key=lambda c: position[c.first.sha])
    lines = words.answer_lines(changes)
    lines.append(words.tally_words(search.records, len(commits)))
    _answer(lines, args.summary, commits)
    return EXIT_OK if all(change.pinned for change in changes) else EXIT_NOT_JUDGED


def _answer(lines: list[str], summary: Path | None, commits: list[Commit]) -> None:
    from ..report.bisect_words import summary_markdown

    sys.stdout.write("".join(f"{line}\n" for line in lines))
    if summary is not None:
        try:
            with summary.open("a", encoding="utf-8") as out:
                out.write(summary_markdown(commits[0], commits[-1], lines))
        except OSError as exc:
            raise UsageError(f"--summary {summary}: cannot append: {exc.strerror}") from None


def _against(
    path: Path, document: ResultDocument, config: Config, launcher: Launcher
) -> CommitCounts:
    """The good end's counts from a stored document, for the steps this bisection follows;
    refused when counted under another torch than the probes'."""
    from ..report.bisect_words import against_words
    from ..results.bisect import counts_of_document
    from ..run.orchestrate import probe_environment

    here = probe_environment(launcher, launcher.python).get("torch")
    if document.environment.torch != here:
        raise UsageError(against_words(document.environment.torch, here, str(path)))
    counts = counts_of_document(document)
    names = {step.name for step in config.steps}
    return CommitCounts({k: v for k, v in counts.steps.items() if k in names})


def _container_launcher(args: argparse.Namespace) -> Launcher:
    """Each child in a fresh container of the --torch version's image, built or reused as
    `matrix --backend docker` does (containers/child_launcher.py)."""
    from ..containers.child_launcher import ContainerLauncher
    from ..containers.matrix import check_version
    from ..containers.outcome import EnvironmentBuildError
    from .matrix_backends import docker_backend

    if args.torch is None:
        raise UsageError("--backend docker: give --torch VERSION, the image's PyTorch version")
    version = check_version(args.torch)
    options = argparse.Namespace(
        **vars(args),
        requirements_bytes=None,
        requirements_allow_source_builds=False,
        rebuild=False,
        keep_old_images=False,
    )
    backend = docker_backend(options, None, _log)
    try:
        image = backend.prepare(version)
    except EnvironmentBuildError as exc:
        raise UsageError(f"torch {version}: {exc}") from None
    return ContainerLauncher(backend.client, image, device_requests=tuple(backend.device_requests))


def _log(line: str) -> None:
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()
