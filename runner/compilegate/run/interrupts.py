"""SIGINT and SIGTERM during a run become RunInterrupted, so the run can stop cleanly.

Children run in their own session (a Ctrl-C in the terminal does not reach them), so the
parent must end them: the exception unwinds through ChildLauncher, which kills the child's
process group before removing its folder, and through the orchestration, which marks the
interrupted step or variant and writes the result with what was measured.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from ..errors import RunInterrupted

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_interrupt_the_run() -> Iterator[None]:
    """While inside: SIGINT or SIGTERM raises RunInterrupted in the main thread, once;
    a second signal is ignored until the block is left (the clean-up must finish). The
    previous handlers come back afterwards. Outside the main thread, does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in HANDLED_SIGNALS}

    def interrupt(number: int, frame: FrameType | None) -> None:
        for other in HANDLED_SIGNALS:
            signal.signal(other, signal.SIG_IGN)
        raise RunInterrupted(number)

    for number in HANDLED_SIGNALS:
        signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


def as_interrupted(exc: BaseException) -> RunInterrupted:
    """A KeyboardInterrupt (no handler installed) is a SIGINT."""
    return exc if isinstance(exc, RunInterrupted) else RunInterrupted(signal.SIGINT)
