"""The `compilegate` command line: the parser, and the one place errors become exit codes.

Each command group lives in its own module and registers itself with `add_parser(subparsers)`.
Exit codes: errors.EXIT_CODES. Set COMPILEGATE_DEBUG=1 for a traceback of an internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import EXIT_CODES, EXIT_RUN_ERROR, CompilegateError
from ..run.workflow_log import defused_output
from . import (
    acceptance_command,
    bisect_command,
    gate_commands,
    images_command,
    init_command,
    matrix_command,
    plan_command,
    publish_command,
    report_commands,
    run_command,
    where_command,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compilegate",
        description="Measure whether torch.compile pays off for your training step.",
        epilog="exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()),
    )
    parser.add_argument("--version", action="version", version=f"compilegate {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    init_command.add_parser(commands)
    run_command.add_parser(commands)
    gate_commands.add_parser(commands)
    report_commands.add_parser(commands)
    publish_command.add_parser(commands)
    acceptance_command.add_parser(commands)
    matrix_command.add_parser(commands)
    images_command.add_parser(commands)
    plan_command.add_parser(commands)
    bisect_command.add_parser(commands)
    where_command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Everything printed from here on may carry a pull request's text (workflow_log.py).
    with defused_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
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

__all__ = ["build_parser", "main"]
