"""The exceptions compilegate raises, and the one table of exit codes (EXIT_CODES).

    CompilegateError            base; never raised itself
    ├── UsageError              bad command line, missing file, bad --python      exit 2
    ├── ConfigError             the config file is malformed or invalid            exit 2
    ├── BaselineError           a baseline or result file is unreadable/invalid    exit 2
    └── BaselineMissing         no baseline of trusted provenance exists (yet)     exit 4

Anything else that escapes to the CLI is an internal error: exit 3, one line.
A comparison exits with its overall verdict's code (0, 1, 3 or 4): gate/verdict.py.

    RunInterrupted (a BaseException, like KeyboardInterrupt: no `except Exception` may
    swallow it)    SIGINT or SIGTERM during a run: the child is killed, the result
                   written with what was measured                      exit 130 / 143

A user's step that fails (its factory raises, its child process crashes or times out)
is *not* an exception in the parent: it becomes an error entry in the result document,
so the other steps still run and nothing already measured is lost.

Every message is one line and names the file, key path or line where that is known.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_USAGE = 2
EXIT_RUN_ERROR = 3
EXIT_NOT_JUDGED = 4
EXIT_SIGINT = 130  # 128 + the signal's number, as shells report it
EXIT_SIGTERM = 143

# What each exit code means: the CLI's --help, docs/gate.md and the gate say it from here.
# Which verdict gives which code: gate/verdict.py VERDICT_EXIT_CODES (the other table).
EXIT_CODES = {
    EXIT_OK: "pass: nothing regressed (also inconclusive, improvement, new, skipped)",
    EXIT_REGRESSION: "regression against the baseline",
    EXIT_USAGE: "usage or config error: bad flag; unreadable or invalid config, baseline, result",
    EXIT_RUN_ERROR: "run error: a step or variant failed, or compilegate itself failed",
    EXIT_NOT_JUDGED: (
        "not judged: part of the baseline could not be compared (missing, removed, incomparable)"
    ),
    EXIT_SIGINT: "interrupted (SIGINT, Ctrl-C): the result holds what was measured",
    EXIT_SIGTERM: "terminated (SIGTERM): the result holds what was measured",
}


class CompilegateError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = EXIT_RUN_ERROR


class UsageError(CompilegateError):
    """Raised for a bad command line, a missing input file, or an unusable interpreter."""

    exit_code = EXIT_USAGE


class ConfigError(CompilegateError):
    """Raised when compilegate.yml cannot be parsed or breaks the schema or an invariant."""

    exit_code = EXIT_USAGE


class BaselineError(CompilegateError):
    """Raised when a baseline or result document is unreadable or breaks its schema."""

    exit_code = EXIT_USAGE


class BaselineMissing(CompilegateError):
    """Raised when no baseline of trusted provenance can be found: nothing can be judged.

    The message says how to create one (run the baseline workflow on the default branch).
    """

    exit_code = EXIT_NOT_JUDGED


class RunInterrupted(BaseException):
    """SIGINT or SIGTERM arrived during a run (run/interrupts.py raises it).

    A BaseException so that no `except Exception` on the way up swallows it. `exit_code` is
    128 + the signal's number; `result_path` is set once the partial result is written.
    """

    def __init__(self, signal_number: int) -> None:
        import signal

        self.signal_number = signal_number
        self.signal_name = signal.Signals(signal_number).name
        self.exit_code = 128 + signal_number
        self.result_path: str | None = None
        super().__init__(f"interrupted by {self.signal_name}")
