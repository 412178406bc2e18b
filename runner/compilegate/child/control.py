"""The child's line to its parent (child process): a child started ahead waits here for its
spec, and every child asks here before its timed rounds.

The launcher (run/launcher.py) starts the next child before the current one has finished,
so that the next one's interpreter start and its imports of torch and Dynamo (2-3 s of a
process on a 2-core CPU) fall in the current one's untimed work. Nothing timed may run
beside another of compilegate's processes, so:

- a child started ahead imports, says `parked`, and waits for `spec PATH` (then it is the
  child that spec names);
- every child says `quiet` before its timed rounds and waits for `go`, which the parent sends
  once the child started ahead (if any) has parked or gone.

The socket's number comes in protocol.CONTROL_VAR, taken out of the environment at once:
user code and the processes it starts (a distributed step's ranks) never see it. Without
it (a container's child, a rank, a test's child) nothing waits. The parent's end closing
(the parent ended) ends the child.

Standard library only; Python 3.8.
"""

from __future__ import annotations

import os
import socket

from .protocol import CONTROL_VAR

_LINE_LIMIT = 4096


class ControlLine:
    """The line to the parent: made once at the child's start (`from_environment`) and
    passed to what asks on it (child/main.py, the measuring functions before their timed
    rounds). Without a socket (`ControlLine()`) nothing waits."""

    def __init__(self, channel: socket.socket | None = None) -> None:
        self._channel = channel

    @classmethod
    def from_environment(cls) -> ControlLine:
        """Take the parent's socket from the environment (no line when there is none)."""
        number = os.environ.pop(CONTROL_VAR, None)
        if not number or not number.isdigit():
            return cls()
        try:
            return cls(socket.socket(fileno=int(number)))
        except OSError:
            return cls()

    @property
    def connected(self) -> bool:
        return self._channel is not None

    def await_spec(self) -> str:
        """Say `parked`, wait for `spec PATH`; the path. Ends the process when the parent
        goes or says anything else."""
        answer = self._ask("parked")
        if not answer.startswith("spec "):
            os._exit(0)
        return answer[len("spec ") :]

    def wait_for_quiet(self) -> None:
        """Before timed rounds: wait until no other process of compilegate's is busy (the
        parent says `go`). Returns at once without a parent on the line."""
        if self._channel is None:
            return
        if self._ask("quiet") != "go":
            os._exit(0)

    def _ask(self, message: str) -> str:
        channel = self._channel
        assert channel is not None  # a child started ahead always has its line
        try:
            channel.sendall(message.encode("ascii") + b"\n")
            line = b""
            while not line.endswith(b"\n"):
                chunk = channel.recv(1)
                if not chunk or len(line) > _LINE_LIMIT:
                    os._exit(0)  # the parent went: nobody reads what this process would measure
                line += chunk
        except OSError:
            os._exit(0)
        return line.decode("utf-8", "replace").rstrip("\n")
