"""A measuring child once started (run/launcher.py starts it): its folder, environment,
output relay and control line (child/control.py); and the one child started ahead of its
turn, which the launcher's next child with the same environment takes.

The launcher starts each child's successor beside it, so that the successor's interpreter
start and its imports of torch and Dynamo fall in the current child's untimed work. The
successor says `parked` once imported; a child about to time says `quiet` and hears `go`
once every child started ahead in this process (a paired run's other side's too) has parked
or gone (docs/numbers.md, "each process's successor started ahead").
"""

from __future__ import annotations

import atexit
import collections
import os
import signal
import socket
import subprocess
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..child.protocol import ChildReport, ChildSpec, Phase
from ..cleanup import remove_tree
from .child_failure import ChildCause, ChildFailure
from .descendant_cpu import DescendantCpu

TAIL_LINES = 40


@dataclass
class ChildOutcome:
    """What came back: the child's report, or why there is none (`cause`, typed:
    run/child_failure.py), with the phase of its last progress line and that line's
    message (`doing`)."""

    report: ChildReport | None
    cause: ChildCause | None
    phase: Phase | None = None
    doing: str = ""
    output_tail: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    started_ahead: bool = False  # the child was started before its turn (ChildLauncher)

    @property
    def failure(self) -> ChildFailure | None:
        """Why there is no report, with where the child was; None when there is one."""
        if self.cause is None:
            return None
        return ChildFailure(self.cause, self.phase, self.doing)


INDUCTOR_CACHE = "inductor-cache"  # a child's own Inductor cache, in its folder
# How long a child about to time waits for the one started ahead to finish its imports (a
# loaded machine's torch import took 30 s): past it, that one is ended and the child times.
AHEAD_IMPORT_WAIT_S = 300.0


def may_start_ahead(spec: ChildSpec) -> bool:
    """Whether a successor may import beside this child: not beside a distributed step's
    ranks (they time without asking, control.py), and only where a second CPU can take it."""
    if spec.settings.get("distributed"):
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


@dataclass(eq=False)
class StartedChild:
    """A child process: its folder, environment, output relay and control line
    (child/control.py)."""

    workdir: Path
    token: str
    env_opt_in: tuple[str, ...]
    cache: str | None  # the Inductor cache its environment names; None: its own folder's
    env: dict[str, str]
    control: socket.socket
    their_end: socket.socket  # the child's end, closed here once the child has it
    process: subprocess.Popen[bytes] | None = None
    outcome: ChildOutcome = field(default_factory=lambda: ChildOutcome(None, None))
    tail: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=TAIL_LINES)
    )
    reader: threading.Thread | None = None
    parked: threading.Event = field(default_factory=threading.Event)

    @property
    def spec_path(self) -> Path:
        return self.workdir / "spec.json"

    @property
    def out_path(self) -> Path:
        return self.workdir / "out.json"

    def send(self, line: str) -> None:
        try:
            self.control.sendall(line.encode("utf-8") + b"\n")
        except OSError:  # it has gone: its outcome says how
            pass

    def answer(self, waiting: AheadPool) -> None:
        """The control line's reader (a thread): `parked` marks this child imported and
        idle; `quiet` is answered `go` once the child started ahead, if any, is idle too
        (waiting.idle). A closed line (the child ended) counts as parked."""
        buffered = b""
        try:
            while True:
                chunk = self.control.recv(256)
                if not chunk:
                    break
                buffered += chunk
                while b"\n" in buffered:
                    line, buffered = buffered.split(b"\n", 1)
                    if line == b"parked":
                        self.parked.set()
                    elif line == b"quiet":
                        waiting.idle(AHEAD_IMPORT_WAIT_S, besides=self)
                        self.send("go")
                if len(buffered) > 4096:  # no message is that long: not ours to read
                    break
        except OSError:
            pass
        finally:
            self.parked.set()

    def wait_parked(self, timeout_s: float) -> bool:
        return self.parked.wait(timeout_s)

    def kill(self) -> None:
        if self.process is not None:
            kill_group(self.process)
            self.process.wait()

    def join_reader(self) -> None:
        if self.reader is not None:
            self.reader.join(timeout=5)

    def close(self) -> None:
        try:
            self.control.close()
        except OSError:
            pass


_POOLS: weakref.WeakSet[AheadPool] = weakref.WeakSet()


class AheadPool:
    """The one child started ahead of its turn, if any, and who may take it: a launcher's
    next child with the same environment (the step's opted-in names) takes it, its Inductor
    cache put in place (a link from the child's own folder to the variant's cache, which it
    then compiles into or reads). Any other child ends it and starts fresh."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._child: StartedChild | None = None
        atexit.register(self.close)  # a caller that never closes its launcher leaves no child
        _POOLS.add(self)  # a paired run's other side's child started ahead counts too (idle)

    def replace(
        self, start: Callable[[tuple[str, ...]], StartedChild], env_opt_in: tuple[str, ...]
    ) -> None:
        """Start a child ahead (ending one that waits)."""
        self.close()
        child = start(env_opt_in)
        if child.process is None:
            remove_tree(child.workdir)
            child.close()
            return
        with self._lock:
            self._child = child

    def take(self, env_opt_in: tuple[str, ...], cache: Path | None) -> StartedChild | None:
        """The child started ahead, made this one's (its cache linked in), or None."""
        with self._lock:
            child, self._child = self._child, None
        if child is None:
            return None
        usable = (
            child.process is not None
            and child.process.poll() is None
            and child.env_opt_in == env_opt_in
            and use_cache(child, cache)
        )
        if not usable:
            end_child(child)
            return None
        return child

    def idle(self, timeout_s: float, *, besides: StartedChild) -> None:
        """Return once every child started ahead (not `besides`), this launcher's and any
        other's in this process (a paired run's other side), has parked or gone; past
        `timeout_s`, end the one still busy."""
        for pool in list(_POOLS):
            pool._idle(timeout_s, besides)

    def _idle(self, timeout_s: float, besides: StartedChild) -> None:
        with self._lock:
            child = self._child
        if child is None or child is besides:
            return
        if not child.wait_parked(timeout_s):
            with self._lock:
                ours = self._child is child  # else a child took it meanwhile: it is its own
                if ours:
                    self._child = None
            if ours:
                end_child(child)

    def close(self) -> str | None:
        """End the child that waits; None, or what of its folder could not be removed."""
        with self._lock:
            child, self._child = self._child, None
        return end_child(child) if child is not None else None


def end_child(child: StartedChild) -> str | None:
    child.kill()
    child.close()
    child.join_reader()
    return remove_tree(child.workdir)


def use_cache(child: StartedChild, cache: Path | None) -> bool:
    """Whether the child started ahead can compile into `cache` (None: a fresh one of its
    own): its environment names that cache already, or its own folder's, which is then made
    a link to `cache` — unless the child wrote there (it imported only: it should not have)."""
    if cache is None:
        return child.cache is None
    if child.cache is not None:
        return child.cache == str(cache)
    own = child.workdir / INDUCTOR_CACHE
    try:
        if os.path.lexists(own):
            if os.path.islink(own) or any(own.iterdir()):
                return False
            own.rmdir()
        os.symlink(cache, own, target_is_directory=True)
    except OSError:
        return False
    return True


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group, and reap the members this process adopted as a child
    subreaper (run/descendant_cpu.py): no zombie of theirs stays behind."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # nothing left in the group
        pass
    DescendantCpu(process.pid).reap_after_kill()
