"""The `compilegate` command line. The one place that turns errors into exit codes.

Exit codes: 0 pass; 1 regression against the baseline; 2 usage or config error
(bad flags, unreadable or invalid config/baseline); 3 run error (a step or variant
failed, or compilegate itself failed). Set COMPILEGATE_DEBUG=1 for tracebacks.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import EXIT_OK, EXIT_RUN_ERROR, EXIT_USAGE, CompilegateError, UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compilegate",
        description="Measure whether torch.compile pays off for your training step.",
    )
    parser.add_argument("--version", action="version", version=f"compilegate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

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

    try:
        from .cli_gate import add_gate_commands
    except ImportError:  # the gate commands ship with the regression-gate module
        pass
    else:
        add_gate_commands(commands)
    return parser


def command_run(args: argparse.Namespace) -> int:
    from .config import Config
    from .render import render_result_table
    from .runner import RunOptions, run_config

    python = _check_python(args.python)
    config = Config.from_file(args.config, repo_root=args.repo).select(args.step)
    options = RunOptions(
        out_path=args.out,
        python=python,
        inductor_cache_dir=args.inductor_cache,
        verbose=args.verbose,
    )
    document = run_config(config, options)
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
        from .cli_gate import compare_and_report

        return compare_and_report(baseline, document, None, sys.stdout)
    return EXIT_RUN_ERROR if failed else EXIT_OK


def _check_python(python: str) -> str:
    import shutil

    found = shutil.which(python)
    if found is None:
        raise UsageError(f"--python {python}: no such interpreter")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CompilegateError as exc:
        sys.stderr.write(f"compilegate: error: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("compilegate: interrupted\n")
        return 130
    except Exception as exc:  # the single catch-all: no traceback for users
        if os.environ.get("COMPILEGATE_DEBUG"):
            raise
        sys.stderr.write(
            f"compilegate: internal error: {type(exc).__name__}: {exc} "
            "(set COMPILEGATE_DEBUG=1 for a traceback)\n"
        )
        return EXIT_RUN_ERROR


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["EXIT_USAGE", "build_parser", "main"]
