"""`compilegate run`: measure the declared steps, write the result, optionally compare."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EXIT_OK, EXIT_RUN_ERROR, RunInterrupted, UsageError

if TYPE_CHECKING:
    from ..config import Config
    from ..gate.run_set import RunSetVerdict
    from ..results.model import ResultDocument
    from ..run.child_user import ChildUser
    from ..run.orchestrate import RunOptions


RUN_BACKENDS = ("host", "image")


def add_parser(commands: Any) -> None:
    run = commands.add_parser("run", help="measure the declared steps eager and compiled")
    run.add_argument(
        "--config",
        default="compilegate.yml",
        type=Path,
        help="config file (default: compilegate.yml)",
    )
    run.add_argument(
        "--step",
        action="append",
        default=[],
        metavar="NAME",
        help="measure only this step (repeatable)",
    )
    run.add_argument(
        "--out",
        default=None,
        type=Path,
        help="result document to write (default: outside the repository: "
        "$RUNNER_TEMP/compilegate/<repo>-<hash8>/result.json in GitHub Actions, else "
        "~/.cache/compilegate/results/<repo>-<hash8>/result.json)",
    )
    run.add_argument(
        "--repo",
        type=Path,
        default=None,
        help="repository root for entries (default: the config's folder)",
    )
    run.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter that imports torch and runs the steps "
        "(e.g. a venv holding another torch; default: this one)",
    )
    run.add_argument(
        "--backend",
        choices=RUN_BACKENDS,
        default="host",
        help="host (default): the children run on this machine as this user; image: inside "
        "the compilegate image (the image as a job container, no Docker): the --python "
        "interpreter (default: this one) must hold torch, and where this process is root the "
        "children run as the image's non-root user (docs/security.md)",
    )
    run.add_argument(
        "--inductor-cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="share this TORCHINDUCTOR_CACHE_DIR across children (warm compiles); "
        "default: a fresh empty cache per child (cold compiles)",
    )
    run.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="start each measuring process only when its turn comes; by default (on two or "
        "more CPUs) the next one starts beside it, imports torch and waits, idle, while the "
        "current one times",
    )
    run.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="compare the result with this baseline (exit codes as for compare)",
    )
    run.add_argument(
        "--against",
        default=None,
        metavar="REF",
        help="paired mode: measure REF (a commit, branch or tag; its config is the policy) "
        "and this checkout in one job, their processes alternating, and compare them; the "
        "base's result goes beside --out (result.base.json)",
    )
    run.add_argument(
        "--pairing",
        choices=("processes", "in-process"),
        default=None,
        help="with --against: how base and head share the machine: `processes` (default: "
        "each process one side, alternating A B B A) or `in-process` (each timing process "
        "holds both sides, interleaved in the same rounds; cold compiles still alternate)",
    )
    add_env_arguments(run)
    run.add_argument(
        "--verbose",
        action="store_true",
        help="also show each child's phases and its own output (default: one line per child)",
    )
    run.set_defaults(func=command_run)


def add_env_arguments(cmd: Any) -> None:
    """Who opts host variables into the children (run/env_policy.py): run and matrix."""
    from ..run.env_policy import CONFIG_ENV_CHOICES

    cmd.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME",
        help="the operator's opt-in: every step's child may see this host variable "
        "(repeatable; never a secret-looking name); not with --against, where the base's "
        "config gives the opt-ins",
    )
    cmd.add_argument(
        "--config-env",
        choices=CONFIG_ENV_CHOICES,
        default=None,
        help="whether the config's own `env:` opt-ins are given: trust (your own config; the "
        "default without --baseline) or ignore (a pull request's: only the --baseline's "
        "recorded opt-ins and --env; the default with --baseline)",
    )


def command_run(args: argparse.Namespace) -> int:
    from ..config.loading import load_config_file
    from ..report.run_text import render_run_text
    from ..results.location import default_result_path
    from ..results.model import parse
    from ..run.checkout_credentials import refuse_persisted_credentials
    from ..run.interrupts import signals_interrupt_the_run
    from ..run.orchestrate import run_config

    python = _check_python(args.python)
    child_user = _image_child_user(python) if args.backend == "image" else None
    config = load_config_file(args.config, repo_root=args.repo).select(args.step)
    refuse_persisted_credentials(config.repo_root)  # a token in .git/config: never measured
    if args.out is None:
        args.out = default_result_path(config.repo_root, os.environ)
    _check_out_path(args.out)
    if args.pairing is not None and args.against is None:
        raise UsageError("--pairing: only with --against (paired mode)")
    if args.against is not None:
        if args.env:
            raise UsageError("--env and --against: in paired mode the base's config gives the "
                             "opt-ins; add the name to its `env:`")  # fmt: skip
        refuse_opted_in_credentials(args.config, config)
        return _run_against(args, config, python, child_user)
    stored = _read_baseline(args.baseline, config)  # before anything is measured
    baseline = stored[0] if stored is not None else None
    config = config_under_env_policy(args, config, baseline if args.baseline is not None else None)
    if baseline is not None:
        from ..gate.policy import adopt_baseline_power
        from ..report.note_words import adopted_power_words

        config, adopted = adopt_baseline_power(config, baseline)
        for note in adopted:
            sys.stderr.write(f"note: {adopted_power_words(note)}\n")
    options = _run_options(args, python, child_user)
    try:
        with signals_interrupt_the_run():
            document = run_config(config, options)
    except RunInterrupted as stop:
        kept = (
            f"what was measured is in {stop.result_path}"
            if stop.result_path
            else "nothing was measured"
        )
        sys.stderr.write(f"compilegate: {stop}; {kept}\n")
        return stop.exit_code
    result = parse(document, str(args.out), "result")  # the run's own, through the door once
    where = [f"result written to {args.out}"]
    if stored is None:
        sys.stdout.write(render_run_text(result, width=_width(), where_lines=where))
        return EXIT_RUN_ERROR if result.failed else EXIT_OK
    from ..gate.class_baselines import class_baseline
    from ..report.judge_and_render import judge_result

    baseline, baseline_path = stored
    # Power and opt-ins came from the named baseline before measuring; the verdict is the
    # measuring machine's hardware class's own baseline, when one lies beside it.
    baseline, baseline_path = class_baseline(baseline_path, baseline, result)
    # An intended change is recorded into the configured baseline, not a scratch copy
    # passed with --baseline (issue 54, finding 10).
    report, run_set = judge_result(
        baseline,
        result,
        result_path=args.out,
        baseline_path=baseline_path,
        refresh_baseline=config.baseline,
    )
    every_row = shlex.join(
        ["compilegate", "compare", "--baseline", str(baseline_path), "--result", str(args.out)]
    )
    sys.stdout.write(
        render_run_text(
            _judged(run_set), width=_width(), run_set=run_set, where_lines=where,
            every_row_command=every_row,
        )
    )  # fmt: skip
    return report.exit_code


def config_under_env_policy(
    args: argparse.Namespace, config: Config, baseline: ResultDocument | None
) -> Config:
    """The steps' opt-ins as the policy gives them (run/env_policy.py), each one the config
    asked for and did not get said in a note; then a credential under a given name is
    refused before anything runs. `baseline`: a --baseline's document (the policy), never a
    file the config names."""
    from ..run.env_policy import apply_env_policy, checked_operator_env, trusts_config_env

    operator_env = checked_operator_env(args.env)
    trust = trusts_config_env(args.config_env, has_baseline=baseline is not None)
    config, notes = apply_env_policy(
        config, baseline=baseline, operator_env=operator_env, trust_config=trust
    )
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    refuse_opted_in_credentials(args.config, config)
    return config


def refuse_opted_in_credentials(where: Path, config: Config) -> None:
    """A credential under an opted-in name: a usage error before anything runs."""
    from ..run.child_env import refuse_credential_values

    try:
        refuse_credential_values(os.environ, [n for step in config.steps for n in step.env])
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def _run_against(
    args: argparse.Namespace, config: Config, python: str, child_user: ChildUser | None
) -> int:
    """Paired mode (run/paired.py): both sides measured, then the head judged against the
    base on paired differences; exit codes as for compare."""
    from ..report.judge_and_render import judge_result
    from ..report.run_text import render_run_text
    from ..results.model import parse
    from ..run.interrupts import signals_interrupt_the_run
    from ..run.paired import run_against

    if args.baseline is not None:
        raise UsageError("--against and --baseline: give one (paired or stored baseline)")
    options = _run_options(args, python, child_user)
    try:
        with signals_interrupt_the_run():
            paired = run_against(
                config,
                args.against,
                options,
                args.pairing or "processes",
                before_measuring=warn_too_few_pairs,
            )
    except RunInterrupted as stop:
        sys.stderr.write(f"compilegate: {stop}; what was measured is in {args.out} and beside it\n")
        return stop.exit_code
    for note in paired.notes:
        sys.stderr.write(f"note: {note}\n")
    base = parse(paired.base, str(paired.base_path), "baseline")
    head = parse(paired.head, str(paired.head_path), "result")
    report, run_set = judge_result(
        base, head, result_path=paired.head_path, baseline_path=paired.base_path
    )
    where = [f"results written to {paired.head_path} (head) and {paired.base_path} (base)"]
    every_row = shlex.join(
        ["compilegate", "compare", "--baseline", str(paired.base_path), "--result",
         str(paired.head_path)]
    )  # fmt: skip
    sys.stdout.write(
        render_run_text(
            _judged(run_set), width=_width(), run_set=run_set, where_lines=where,
            every_row_command=every_row,
        )
    )  # fmt: skip
    return report.exit_code


def warn_too_few_pairs(config: Config) -> None:
    """Before a paired run measures: one line on stderr when a step's variant_processes
    pairs too few processes for its speed to be judged (report/row_words/too_few_pairs.py)."""
    from ..report.row_words.too_few_pairs import too_few_pairs_warning

    line = too_few_pairs_warning([(step.name, step.variant_processes) for step in config.steps])
    if line:
        sys.stderr.write(line + "\n")


def _judged(run_set: RunSetVerdict) -> ResultDocument:
    """The result judge_result's run set of one version carries (report/judge_and_render.py)."""
    document = run_set.versions[0].document
    if document is None:
        raise ValueError("a run set of one judged version without its result document")
    return document


def _width() -> int:
    """The terminal's width (60–100 columns): COLUMNS when set (a log viewer's width, or a
    pipe's), else the terminal's; 100 when stdout is not a terminal."""
    from ..report.run_text import WIDEST, terminal_width

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return terminal_width(int(columns))
    size = shutil.get_terminal_size((WIDEST, 24)).columns if sys.stdout.isatty() else None
    return terminal_width(size)


def _run_options(
    args: argparse.Namespace, python: str, child_user: ChildUser | None = None
) -> RunOptions:
    from ..run.orchestrate import RunOptions

    return RunOptions(
        out_path=args.out,
        python=python,
        inductor_cache_dir=args.inductor_cache,
        verbose=args.verbose,
        ahead=not args.one_at_a_time,
        child_user=child_user,
    )


def _image_child_user(python: str) -> ChildUser:
    """`--backend image`: the interpreter must hold torch (the image's); the children run as
    the image's non-root user where this process is root and may switch (run/child_user.py),
    said in one line."""
    from ..containers.image_backend import torch_version_of
    from ..report.shape_words import child_user_line
    from ..run.child_user import decide_child_user

    if torch_version_of(python) is None:
        raise UsageError(
            f"--backend image: {python} has no torch; run compilegate from the image, whose "
            "python holds it, or give --python the interpreter that does"
        )
    user = decide_child_user()
    sys.stderr.write(child_user_line(user) + "\n")
    return user


def _check_python(python: str) -> str:
    found = shutil.which(python)
    if found is None:
        raise UsageError(f"--python {python}: no such interpreter")
    return found


def _check_out_path(out: Path) -> None:
    """`--out` must be a file we can write: checked before minutes of measuring."""
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; give the result file's path")
    folder = next((p for p in [out.parent, *out.parent.parents] if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise UsageError(f"--out {out}: {folder} is not a directory")
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: cannot write in {folder}")


def _read_baseline(path: Path | None, config: Config) -> tuple[ResultDocument, Path] | None:
    """The baseline to compare with after the run and where it is, read and validated now:
    a missing, unreadable or invalid `--baseline` is a usage error before anything is
    measured. The config's `baseline:` is compared only when that file exists."""
    from ..gate.documents import read_document

    if path is None and config.baseline is not None:
        candidate = config.repo_root / config.baseline
        if not candidate.is_file():
            sys.stderr.write(f"note: baseline {config.baseline} not found; nothing compared\n")
            return None
        path = candidate
    if path is None:
        return None
    return read_document(path, role="baseline"), path
