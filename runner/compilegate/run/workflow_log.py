"""What compilegate prints cannot become a GitHub Actions workflow command, unless it means to.

On a runner, every line a step prints is parsed for workflow commands: `::name args::value`
once leading white space is trimmed, and the older `##[name args]value` anywhere in the line
(actions/runner, ActionCommand.TryParseV2 and TryParse); the runner cuts lines at CR as well
as LF. Much of what compilegate prints carries text from the measured code or the checkout
(exception messages, graph-break reasons, file names, the child's own output), and the text
report wraps it, so any word may start a line. A forged `::add-mask::`, `::stop-commands::`,
annotation or `::group::` would act in the job's log (issue 29).

So the defence sits at the stream, not at each call site: the CLI wraps its stdout and stderr
once (`defused_output`) in a `DefusedStream`, which passes every complete line through
`relay.neutralise` — the one function that also defuses the children's relayed output.
compilegate's own commands (the annotations `compilegate publish` prints) take the one
explicit channel, `write_command`; a terminal's control sequences (the elapsed-time ticker)
take `terminal`. Only the standard library.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

from .relay import neutralise


class DefusedStream(io.TextIOBase):
    """A text stream that writes `neutralise`d lines to `raw`. A line is passed on when its
    newline comes (a command is recognised only on a whole line); the rest of a line waits
    for it, or for `finish`."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw
        self._partial = ""
        self._lock = threading.RLock()  # the relay threads print progress lines meanwhile

    def write(self, text: str) -> int:
        with self._lock:
            *lines, self._partial = (self._partial + text).split("\n")
            if lines:
                self.raw.write("".join(neutralise(line) + "\n" for line in lines))
        return len(text)

    def command(self, line: str) -> None:
        """One workflow command of compilegate's own, on a line of its own."""
        if not line.startswith("::") or "\n" in line or "\r" in line:
            raise ValueError(f"not one workflow command line: {line[:60]!r}")
        with self._lock:
            self._end_partial_line()
            self.raw.write(line + "\n")

    def terminal(self, text: str) -> None:
        """Control sequences for an interactive terminal (never a workflow log): as they are."""
        with self._lock:
            self.raw.write(text)
            self.raw.flush()

    def flush(self) -> None:
        with self._lock:
            self.raw.flush()

    def finish(self) -> None:
        """Pass on what waits of an unfinished line (at exit), and flush."""
        with self._lock:
            if self._partial:
                self.raw.write(neutralise(self._partial))
                self._partial = ""
            self.raw.flush()

    def _end_partial_line(self) -> None:
        if self._partial:
            self.raw.write(neutralise(self._partial) + "\n")
            self._partial = ""

    # What callers ask of sys.stdout / sys.stderr.
    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return _is_terminal(self.raw)

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)


def write_command(stream: TextIO, line: str) -> None:
    """compilegate's own workflow command (an annotation): the one way past the defusing."""
    if isinstance(stream, DefusedStream):
        stream.command(line)
    else:
        stream.write(line + "\n")


def write_terminal(stream: TextIO, text: str) -> None:
    """A terminal's control sequence (`\\r`, `ESC [K`), past the defusing."""
    if isinstance(stream, DefusedStream):
        stream.terminal(text)
    else:
        stream.write(text)
        stream.flush()


@contextlib.contextmanager
def defused_output() -> Iterator[None]:
    """sys.stdout and sys.stderr defused while the block runs (the CLI's whole command)."""
    saved = sys.stdout, sys.stderr
    wrapped = [
        stream if isinstance(stream, DefusedStream) else DefusedStream(stream) for stream in saved
    ]
    sys.stdout, sys.stderr = wrapped
    try:
        yield
    finally:
        for stream in wrapped:
            with contextlib.suppress(Exception):  # a closed pipe at exit: nothing to save
                stream.finish()
        sys.stdout, sys.stderr = saved


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
