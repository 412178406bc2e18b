"""The elapsed-seconds line shown while a compile runs: on a terminal only."""

from __future__ import annotations

import io
import time

from compilegate.child.protocol import Phase
from compilegate.run.progress import ElapsedTicker


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_elapsed_seconds_during_the_compile_then_a_cleared_line():
    stream = Terminal()
    ticker = ElapsedTicker(stream, interval_s=0.01)
    ticker.follow(Phase.EAGER_WARMUP)
    ticker.follow(Phase.COMPILE)  # compiling: warm-up 1/2 includes the compile
    time.sleep(0.1)
    ticker.follow(Phase.COMPILE)  # compiled warm-up 1/2: still the phase, no compile left
    text = stream.getvalue()
    assert "\r  … compiling: 0 s" in text
    assert text.endswith("\r\x1b[K")
    written = len(text)
    time.sleep(0.05)
    assert len(stream.getvalue()) == written  # stopped: no more ticks after the compile


def test_a_ci_log_gets_no_ticker_lines():
    stream = io.StringIO()  # not a terminal
    ticker = ElapsedTicker(stream, interval_s=0.01)
    ticker.follow(Phase.COMPILE)
    time.sleep(0.05)
    ticker.stop()
    assert stream.getvalue() == ""
