"""Elapsed seconds on an interactive terminal while a long phase runs (the first compiled
iteration: Inductor's cold compile can take minutes with no other sign of life).

Only when the stream is a terminal: in CI logs a line rewritten every second is noise, so
there the child's plain progress lines are all there is.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, TextIO

from ..child.protocol import Phase
from .workflow_log import write_terminal

# Phases in which the child may be silent for a long time, with what the ticker says.
LONG_PHASES = {Phase.COMPILE: "compiling"}


class ElapsedTicker:
    """Rewrites one status line (`\\r  … compiling: 12 s`) until stopped."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        interactive: bool | None = None,
    ) -> None:
        self.stream = stream
        self.interval_s = interval_s
        self.clock = clock
        self.interactive = _is_terminal(stream) if interactive is None else interactive
        self._lock = threading.Lock()
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._phase: Phase | None = None  # the phase of the last line followed

    def follow(self, phase: Phase) -> None:
        """After each progress line (its phase field): tick from the line that begins a long
        phase (the first compiled iteration) to the next line, else stay quiet."""
        self.stop()
        begins = phase is not self._phase
        self._phase = phase
        if self.interactive and begins and phase in LONG_PHASES:
            self._start(LONG_PHASES[phase])

    def stop(self) -> None:
        if self._stop is None:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            write_terminal(self.stream, "\r\x1b[K")
        self._stop = self._thread = None

    def _start(self, label: str) -> None:
        stop = threading.Event()
        started = self.clock()

        def tick() -> None:
            while not stop.wait(self.interval_s):
                with self._lock:
                    write_terminal(self.stream, f"\r  … {label}: {self.clock() - started:.0f} s")

        self._stop = stop
        self._thread = threading.Thread(target=tick, daemon=True)
        self._thread.start()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
