"""`compilegate run`: measure the declared steps, write the result, optionally compare."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import EXIT_OK, EXIT_RUN_ERROR, RunInterrupted, UsageError


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
        default=Path("result.json"),
        type=Path,
        help="result document to write (default: result.json)",
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
        "--inductor-cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="share this TORCHINDUCTOR_CACHE_DIR across children (warm compiles); "
        "default: a fresh empty cache per child (cold compiles)",
    )
    run.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="compare the result with this baseline and exit 1 on a regression",
    )
    run.add_argument(
        "--verbose", action="store_true", help="also show the child processes' own output"
    )
    run.set_defaults(func=command_run)


def command_run(args: argparse.Namespace) -> int:
    from ..config import Config
    from ..report.result_table import render_result_table
    from ..run.interrupts import signals_interrupt_the_run
    from ..run.orchestrate import RunOptions, run_config

    python = _check_python(args.python)
    config = Config.from_file(args.config, repo_root=args.repo).select(args.step)
    options = RunOptions(
        out_path=args.out,
        python=python,
        inductor_cache_dir=args.inductor_cache,
        verbose=args.verbose,
    )
    try:
        with signals_interrupt_the_run():
            document = run_config(config, options)
    except RunInterrupted as stop:
        where = (
            f"what was measured is in {stop.result_path}"
            if stop.result_path
            else "nothing was measured"
        )
        sys.stderr.write(f"compilegate: {stop}; {where}\n")
        return stop.exit_code
    sys.stdout.write(render_result_table(document))
    sys.stdout.write(f"\nresult written to {args.out}\n")
    failed = any(
        s["status"] != "ok" or any(v["status"] != "ok" for v in s["variants"])
        for s in document["steps"]
    )
    baseline = args.baseline
    if baseline is None and config.baseline is not None:
        candidate = config.repo_root / config.baseline
        baseline = candidate if candidate.is_file() else None
        if baseline is None:
            sys.stderr.write(f"note: baseline {config.baseline} not found; nothing compared\n")
    if baseline is not None:
        from .gate_commands import compare_and_report

        return compare_and_report(baseline, document, None, sys.stdout)
    return EXIT_RUN_ERROR if failed else EXIT_OK


def _check_python(python: str) -> str:
    found = shutil.which(python)
    if found is None:
        raise UsageError(f"--python {python}: no such interpreter")
    return found
