"""Run one measurement in a child process: fresh Inductor cache and HOME, an allow-listed
environment (child_env.py), a budget of CPU seconds with a wall cap (child_budget.py), crash
capture; the child's whole process group is killed when it passes a limit and when the
parent is interrupted.

The child may run under another interpreter (`--python`, maybe Python 3.8), which need not
have compilegate installed: the bootstrap loads the package straight from its folder, without
putting that folder's parent (maybe a site-packages with another torch) on sys.path. It runs
with the repository as working directory (user code opens its files relative to it), so its
first act is to take the working directory off sys.path: `-c` puts it first, and a
repository file named like a standard-library module (json.py, platform.py) would otherwise
replace the harness's own imports. User code is made importable later, by the child
(child/user_code.py), after the harness has imported what it needs.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, TextIO, runtime_checkable

from ..bounded_json import DocumentRefused, read_bounded_json
from ..child.protocol import (
    CONTROL_VAR,
    SPARE_ARGUMENT,
    ChildReport,
    ChildSpec,
    ReportError,
    bootstrap,
    new_progress_token,
    read_progress,
)
from ..cleanup import remove_tree
from .child_budget import ChildBudget, wait_within
from .child_env import child_environment, harness_variables
from .child_failure import (
    BadResult,
    ChildCause,
    Crashed,
    DeadlineRanOut,
    Exited,
    NoResult,
    NotStarted,
    TimedOut,
    WallCapPassed,
    budget_cause,
)
from .child_process import (
    INDUCTOR_CACHE,
    AheadPool,
    ChildOutcome,
    StartedChild,
    kill_group,
    may_start_ahead,
)
from .child_user import ChildUser, hand_folder
from .descendant_cpu import DescendantCpu, become_subreaper, counting
from .progress import ElapsedTicker
from .relay import bounded_lines, neutralise, read_chunks

PACKAGE_DIR = Path(__file__).resolve().parents[1]

BOOTSTRAP = bootstrap("from compilegate.child.main import main\nmain(sys.argv[2])")


@runtime_checkable
class Launcher(Protocol):
    """What runs a measuring child, as the run side (orchestrate.py, step_measurement.py,
    paired.py) uses it: ChildLauncher on this machine, containers/child_launcher.py's
    ContainerLauncher in a fresh container, DeadlineLauncher either under one limit."""

    @property
    def python(self) -> str:
        """The measuring interpreter, as the result document names it."""

    @property
    def shared_cache_dir(self) -> Path | None:
        """The one Inductor cache every child shares (--inductor-cache), or None: each
        variant compiles into its own."""

    @property
    def host_env(self) -> Mapping[str, str]:
        """The environment the children's allow-list is taken from."""

    @property
    def stream(self) -> TextIO:
        """Where the launcher's warnings (and, with show_output, the child's lines) go."""

    @property
    def shares_host_paths(self) -> bool:
        """Whether the children read and write this machine's files (a container's do not):
        then a step's eager process can leave its variants the float64 reference."""

    @property
    def children_local(self) -> bool:
        """Whether the children are this process's descendants, their CPU time and GPU use
        ours to count (run/machine_load.py, gpu_state.py); a container's are the engine's."""

    def run(
        self,
        spec: ChildSpec,
        *,
        label: str,
        timeout_s: float,
        env_opt_in: Sequence[str] = (),
        cache_dir: Path | None = None,
        wall_cap_s: float | None = None,
    ) -> ChildOutcome:
        """Run one child to completion: its document, or why there is none. `timeout_s`
        bounds its CPU seconds, a wall cap its wall-clock time (run/child_budget.py):
        `wall_cap_s` when given and lower than the usual cap."""


def hand_to_children(launcher: Launcher, folder: Path) -> None:
    """Make a folder the parent made for the children (a variant's Inductor cache, a step's
    float64 reference) theirs, where they run as another user (ChildLauncher.child_user)."""
    hand = getattr(launcher, "hand_folder", None)
    if callable(hand):
        hand(folder)


def close_launcher(launcher: Launcher) -> None:
    """End what a launcher keeps between children (ChildLauncher.close), where it keeps any."""
    close = getattr(launcher, "close", None)
    if callable(close):
        close()


@dataclass
class DeadlineLauncher:
    """Another launcher under one wall-clock limit shared by many children (`matrix
    --timeout-s` in paired mode, where one run holds every version's children): each child's
    wall cap and CPU budget (child_budget.py) are cut to what is left, and a child due after
    the limit is not started.
    Everything else is the inner launcher's."""

    inner: Launcher | None  # None: only to draw a deadline many launchers share
    limit_s: float
    deadline: float = 0.0  # time.monotonic() at which the limit runs out; 0: limit_s from now

    def __post_init__(self) -> None:
        import time

        if not self.deadline:
            self.deadline = time.monotonic() + self.limit_s

    def close(self) -> None:
        """The inner launcher's close, where it has one (ChildLauncher.close)."""
        if self.inner is not None:
            close_launcher(self.inner)

    def hand_folder(self, folder: Path) -> None:
        """The inner launcher's, where it has one (ChildLauncher.hand_folder)."""
        if self.inner is not None:
            hand_to_children(self.inner, folder)

    @property
    def _launcher(self) -> Launcher:
        if self.inner is None:
            raise TypeError("DeadlineLauncher without a launcher only draws a deadline")
        return self.inner

    @property
    def python(self) -> str:
        return self._launcher.python

    @property
    def shared_cache_dir(self) -> Path | None:
        return self._launcher.shared_cache_dir

    @property
    def host_env(self) -> Mapping[str, str]:
        return self._launcher.host_env

    @property
    def stream(self) -> TextIO:
        return self._launcher.stream

    @property
    def shares_host_paths(self) -> bool:
        return self._launcher.shares_host_paths

    @property
    def children_local(self) -> bool:
        return self._launcher.children_local

    def visible_gpus(self, total: int) -> tuple[int, ...]:
        from .machine_reading import gpus_given

        return gpus_given(self._launcher, total)

    def run(
        self,
        spec: ChildSpec,
        *,
        label: str,
        timeout_s: float,
        env_opt_in: Sequence[str] = (),
        cache_dir: Path | None = None,
        wall_cap_s: float | None = None,
    ) -> ChildOutcome:
        import time

        left = self.deadline - time.monotonic()
        if left <= 0:
            return ChildOutcome(None, DeadlineRanOut(self.limit_s, started=False))
        # The limit is wall-clock time: the child's wall cap, and its CPU seconds no more.
        outcome = self._launcher.run(
            spec,
            label=label,
            timeout_s=min(timeout_s, left),
            env_opt_in=env_opt_in,
            cache_dir=cache_dir,
            wall_cap_s=left if wall_cap_s is None else min(left, wall_cap_s),
        )
        cause = outcome.cause
        timed_out = isinstance(cause, (TimedOut, WallCapPassed, DeadlineRanOut)) and (
            not isinstance(cause, DeadlineRanOut) or cause.started
        )
        cut = timed_out and left < timeout_s
        if cut or (isinstance(cause, WallCapPassed) and left < ChildBudget.of(timeout_s).wall_s):
            outcome.cause = DeadlineRanOut(self.limit_s)
        return outcome


@dataclass(frozen=True)
class ChildLauncher:
    """Starts measuring children. `host_env` is the environment the allow-list is taken from
    (the runner's os.environ unless a test passes another). With `ahead` (the default, on a
    machine of two CPUs or more) each child's successor is started beside it and waits,
    imported, for its turn (`AheadPool`); `close()` ends the one left waiting.
    `child_user`: the user the children run as when it is not this process's (the image
    backend as root: run/child_user.py); their folders are handed to it."""

    # Children run on this machine: they read and write the host's files (a container
    # launcher's do not), so a step's eager process can leave the variants its float64
    # reference (run/step_measurement.py); they are this process's descendants.
    shares_host_paths: ClassVar[bool] = True
    children_local: ClassVar[bool] = True
    python: str = sys.executable
    shared_cache_dir: Path | None = None
    show_output: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stderr)  # at run time: defused
    host_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    ahead: bool = True
    child_user: ChildUser | None = None
    _waiting: AheadPool = field(default_factory=lambda: AheadPool(), compare=False, repr=False)
    _handed: set[Path] = field(default_factory=set, compare=False, repr=False)

    def run(
        self,
        spec: ChildSpec,
        *,
        label: str,
        timeout_s: float,
        env_opt_in: Sequence[str] = (),
        cache_dir: Path | None = None,
        wall_cap_s: float | None = None,
    ) -> ChildOutcome:
        """Run one child to completion, within its budget (child_budget.py). Its Inductor
        cache is `cache_dir` when given (a variant's later processes reuse the cache its first
        process compiled into), else the shared one, else a fresh one that goes with the
        child. The child is the one started ahead when one waits with the same interpreter
        environment (then its budget counts from now, its CPU seconds from its start). An
        interruption (KeyboardInterrupt, RunInterrupted) kills the child's process group
        before it propagates, and before the child's folder is removed."""
        import time

        opt_in = tuple(env_opt_in)
        started = time.perf_counter()
        # One started ahead moves into the repository by its path: a relative one (to our
        # working directory, not its own) starts a child of its own.
        movable = spec.repo_root is None or os.path.isabs(spec.repo_root)
        child = self._waiting.take(opt_in, cache_dir or self.shared_cache_dir) if movable else None
        fresh = child is None
        if child is None:
            child = self._prepare(opt_in, cache_dir)
        try:
            spec = replace(spec, out=str(child.out_path), label=label, progress_token=child.token)
            child.spec_path.write_text(json.dumps(spec.to_json()), encoding="utf-8")
            if fresh:
                self._launch(child, spec.repo_root, str(child.spec_path))
            else:
                child.send(f"spec {child.spec_path}")
            if child.process is None:  # could not start: the outcome says why
                return child.outcome
            if self.ahead and may_start_ahead(spec):
                self._waiting.replace(self._start_ahead, opt_in)
            outcome = self._wait(child, ChildBudget.of(timeout_s, wall_cap_s))
            outcome.wall_s = time.perf_counter() - started
            outcome.started_ahead = not fresh
            if outcome.cause is None:
                outcome.report, outcome.cause = _read_child_report(child.out_path)
            return outcome
        except BaseException:  # interrupted: neither child may outlive us
            child.kill()
            self._waiting.close()
            raise
        finally:  # HOME is in it: the child may have left folders it made unreadable
            child.close()
            left = remove_tree(child.workdir)
            if left is not None:
                self.stream.write(f"warning: {left}\n")

    def close(self) -> None:
        """End the child left waiting for a turn that will not come, and remove its folder."""
        left = self._waiting.close()
        if left is not None:
            self.stream.write(f"warning: {left}\n")

    def hand_folder(self, folder: Path) -> None:
        """A folder the children write, made theirs (run/child_user.py)."""
        hand_folder(folder, self.child_user)

    def _prepare(self, env_opt_in: tuple[str, ...], cache_dir: Path | None) -> StartedChild:
        """A child's fresh folder (HOME, its own Inductor cache unless `cache_dir` or the
        shared one), its environment and its control line; not started yet."""
        workdir = Path(tempfile.mkdtemp(prefix="compilegate-"))
        home = workdir / "home"
        home.mkdir()
        own_cache = workdir / INDUCTOR_CACHE
        cache = cache_dir or self.shared_cache_dir or own_cache
        hand_folder(workdir, self.child_user)
        shared = self.shared_cache_dir
        if shared is not None and self.child_user is not None and shared not in self._handed:
            self.hand_folder(shared)  # once: what the children add to it is theirs
            self._handed.add(shared)
        env = child_environment(self.host_env, env_opt_in)
        env.update(harness_variables(home, Path(cache), self.host_env))
        ours, theirs = socket.socketpair()
        env[CONTROL_VAR] = str(theirs.fileno())
        return StartedChild(
            workdir=workdir,
            token=new_progress_token(),
            env_opt_in=env_opt_in,
            cache=None if cache == own_cache else str(cache),
            env=env,
            control=ours,
            their_end=theirs,
        )

    def _start_ahead(self, env_opt_in: tuple[str, ...]) -> StartedChild:
        """A child started before its spec is known: it imports and waits (child/control.py),
        in its own folder, which it leaves for the repository once the spec names it."""
        child = self._prepare(env_opt_in, None)
        self._launch(child, None, SPARE_ARGUMENT)
        return child

    def _launch(self, child: StartedChild, repo_root: str | None, spec_argument: str) -> None:
        """Start the prepared child in `repo_root` (None: its own folder)."""
        argv = [self.python, "-c", BOOTSTRAP, str(PACKAGE_DIR), spec_argument]
        self._launch_argv(child, argv, repo_root if repo_root is not None else str(child.workdir))

    def _launch_argv(self, child: StartedChild, argv: list[str], cwd: str) -> None:
        """Start `argv` as the prepared child, its output relayed, its control line answered.
        This process is made a child subreaper first: the child's orphaned descendants are
        then its own to count and reap (run/descendant_cpu.py)."""
        become_subreaper()
        user = self.child_user
        switch: dict[str, Any] = (
            {"user": user.uid, "group": user.gid, "extra_groups": []}
            if user is not None and user.switched
            else {}
        )
        try:
            child.process = subprocess.Popen(
                argv,
                env=child.env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(child.their_end.fileno(),),
                **switch,
            )
        except OSError as exc:
            child.outcome.cause = NotStarted(argv[0], str(exc.strerror))
            return
        finally:
            child.their_end.close()
        child.reader = threading.Thread(
            target=self._relay,
            args=(child.process, child.outcome, child.tail, child.token),
            daemon=True,
        )
        child.reader.start()
        threading.Thread(target=child.answer, args=(self._waiting,), daemon=True).start()

    def _wait(self, child: StartedChild, budget: ChildBudget) -> ChildOutcome:
        process, outcome = child.process, child.outcome
        assert process is not None
        cpu = DescendantCpu(process.pid)  # the group's, with its exited orphans
        try:
            passed = wait_within(
                lambda seconds: _ended_within(process, seconds), cpu.read_s, budget
            )
            if passed is not None:
                child.kill()
                child.join_reader()
                outcome.output_tail = list(child.tail)
                outcome.cause = budget_cause(passed, counting())
                return outcome
            returncode = process.wait()
        except BaseException:  # interrupted: the child (own session) must not outlive us
            child.kill()
            child.join_reader()
            raise
        # What the child left running (a compile-worker pool: the child leaves with os._exit)
        # must neither burn CPU during the next measurement nor hold the output pipe open.
        kill_group(process)
        child.join_reader()
        outcome.output_tail = list(child.tail)
        if returncode < 0:
            outcome.cause = Crashed(signal.Signals(-returncode).name, -returncode)
        elif returncode != 0:
            last = next((line for line in reversed(child.tail) if line.strip()), "")
            outcome.cause = Exited(returncode, last.strip())
        return outcome

    def _relay(
        self,
        process: subprocess.Popen[bytes],
        outcome: ChildOutcome,
        tail: collections.deque[str],
        progress_token: str,
    ) -> None:
        assert process.stdout is not None
        lines = bounded_lines(read_chunks(process.stdout))  # never a whole line of any length
        relay_output(
            lines,
            outcome,
            tail,
            self.stream,
            progress_token=progress_token,
            show_output=self.show_output,
        )


def relay_output(
    lines: Iterable[str],
    outcome: ChildOutcome,
    tail: collections.deque[str],
    stream: TextIO,
    *,
    progress_token: str,
    show_output: bool = False,
) -> None:
    """A child's output, line by line (lines already cut to a bound: relay.bounded_lines):
    its progress lines — those with the prefix of the token it was given — their phase
    field and message kept as where the child is in `outcome` (and shown with
    `show_output`: --verbose; otherwise the parent's one line per child is all the log gets,
    and a terminal sees the compile's elapsed seconds),
    the rest kept in `tail` (shown with `show_output`); nothing relayed can be a workflow
    command (relay.neutralise)."""
    ticker = ElapsedTicker(stream)
    try:
        for line in lines:
            line = neutralise(line.rstrip("\n"))
            progress = read_progress(line, progress_token)
            if progress is not None:
                outcome.phase, outcome.doing = progress.phase, progress.message
                ticker.stop()
                if show_output:
                    stream.write(f"  {progress.shown}\n")
                    stream.flush()
                ticker.follow(progress.phase)
            else:
                tail.append(line)
                if show_output:
                    ticker.stop()
                    stream.write(f"    | {line}\n")
    finally:
        ticker.stop()


def _read_child_report(out_path: Path) -> tuple[ChildReport | None, ChildCause | None]:
    """The child's result file, or why there is none (user code can write anything there)."""
    if not out_path.is_file():
        return None, NoResult()
    return read_report_file(out_path)


def read_report_file(path: Path) -> tuple[ChildReport | None, BadResult | None]:
    """The child's result file as its report, or why it is none: read within the limits of
    bounded_json.py (the child runs user code, which can write anything there)."""
    try:
        document = read_bounded_json(path)
    except DocumentRefused as exc:
        return None, BadResult("refused", str(exc))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, BadResult("unreadable", type(exc).__name__)
    return read_report(document)


def read_report(document: Any) -> tuple[ChildReport | None, BadResult | None]:
    """A child's parsed result as its report, or why it is none: the parent's door."""
    try:
        return ChildReport.from_json(document), None
    except ReportError as exc:
        return None, BadResult("unparsable", str(exc))


def _ended_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True
