"""A step's resource limits (config/limits.py) applied to a container, and how a container
that ran into one is told apart from one that failed on its own.

- `limit_kwargs`: the engine's memory (swap none beyond it), pids and json-file log bounds;
- `PidsWatch`: the engine records no event when a fork fails at the pids limit, so the
  container's own cgroup counter (`pids.events`, "max N": forks refused) is read from the
  host while it runs — where the host cannot see the engine's cgroups (a remote or rootless
  engine), nothing is read and the limit still holds, unreported;
- `limit_breach`: after the container ended, the one-line reason when it was over a limit
  (the engine's OOMKilled flag, the pids counter), else None;
- `output_over`: the output folder's size, walked without following a link, against
  `output_mib` — checked before anything in it is read.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import Any

from ..config.limits import MIB, ResourceLimits, shown_mib
from ..report.child_failure_words import cause_text
from ..run.child_failure import OutOfMemory, PidsLimit

CGROUP_ROOT = Path("/sys/fs/cgroup")
WATCH_PERIOD_S = 0.2
MAX_OUTPUT_ENTRIES = 100_000  # a folder of a million empty files is over too


def limit_kwargs(limits: ResourceLimits) -> dict[str, Any]:
    """Keyword arguments for `client.containers.run` that bound the container."""
    from docker.types import LogConfig

    memory = f"{limits.memory_mib}m"
    return {
        "mem_limit": memory,
        "memswap_limit": memory,  # equal: no swap beyond the memory limit
        "pids_limit": limits.pids,
        "log_config": LogConfig(
            type="json-file", config={"max-size": f"{limits.log_mib}m", "max-file": "1"}
        ),
    }


class PidsWatch:
    """Reads the running container's `pids.events` every WATCH_PERIOD_S; `refused` is the
    most forks it saw refused at the limit (0 when none, or when the file is unreadable)."""

    def __init__(self, container: Any, *, cgroup_root: Path = CGROUP_ROOT) -> None:
        self.container = container
        self.cgroup_root = cgroup_root
        self.refused = 0
        self._events: Path | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> PidsWatch:
        self._thread.start()
        return self

    def stop(self) -> int:
        self._done.set()
        self._thread.join(timeout=5)
        return self.refused

    def _watch(self) -> None:
        try:
            self.container.reload()
            pid = int(self.container.attrs["State"]["Pid"])
        except Exception:  # gone already, or an engine without the field
            return
        self._events = pids_events_file(pid, self.cgroup_root)
        while self._events is not None:
            self.refused = max(self.refused, read_refused(self._events))
            if self._done.wait(WATCH_PERIOD_S):
                self.refused = max(self.refused, read_refused(self._events))
                return


def pids_events_file(pid: int, cgroup_root: Path = CGROUP_ROOT) -> Path | None:
    """The `pids.events` of the cgroup process `pid` is in (cgroup v1 or v2), if readable."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):  # v1: the pids hierarchy
            candidate = cgroup_root / "pids" / path.lstrip("/") / "pids.events"
            break
    else:
        v2 = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)
        if v2 is None:
            return None
        candidate = cgroup_root / v2.lstrip("/") / "pids.events"
    return candidate if candidate.is_file() else None


def read_refused(events: Path) -> int:
    """The "max N" of a pids.events file: forks refused at the limit; 0 when unreadable."""
    try:
        for line in events.read_text(encoding="ascii").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def limit_cause(
    container: Any, limits: ResourceLimits, pids_refused: int
) -> OutOfMemory | PidsLimit | None:
    """Which limit the ended container was over (its memory: the kernel killed it; its
    pids: forks were refused), or None."""
    try:
        container.reload()
        oom = bool(container.attrs["State"].get("OOMKilled"))
    except Exception:  # removed under us: the pids counter still speaks
        oom = False
    if oom:
        return OutOfMemory(limits.memory_mib)
    if pids_refused:
        return PidsLimit(limits.pids, pids_refused)
    return None


def limit_breach(container: Any, limits: ResourceLimits, pids_refused: int) -> str | None:
    """Why the ended container was over a limit, in report/'s words ("killed: out of memory
    (limit 8 GiB)", "pids limit 4096 reached …"), or None."""
    cause = limit_cause(container, limits, pids_refused)
    return None if cause is None else cause_text(cause)


def output_over(folder: Path, limits: ResourceLimits) -> str | None:
    """Why the output folder is over `output_mib` (then nothing in it may be read), or None.
    Sizes are taken with lstat, links never followed, the walk stopped once over. A folder
    or entry the run made unreadable (mode 000, a folder without search permission) is over
    too: its size cannot be known, and skipping it let a run leave any amount there
    (issue 29, finding 5). Root reads through any mode, so this shows on a non-root runner."""
    limit_bytes = limits.output_mib * MIB
    over = f"output folder over its limit of {shown_mib(limits.output_mib)} (limits.output_mib)"
    total, entries = 0, 0
    stack = [str(folder)]
    while stack:
        path = stack.pop()
        try:
            scan = os.scandir(path)
        except FileNotFoundError:  # the run removed it: nothing there to count
            continue
        except OSError as exc:
            return f"{over}: {_shown(folder, path)} unreadable ({exc.strerror})"
        with scan:
            for entry in scan:
                entries += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    return f"{over}: {_shown(folder, entry.path)} unreadable ({exc.strerror})"
                total += info.st_blocks * 512  # what it takes on disk (a sparse file: little)
                if stat.S_ISDIR(info.st_mode):
                    stack.append(entry.path)
                if total > limit_bytes or entries > MAX_OUTPUT_ENTRIES:
                    return over
    return None


def _shown(folder: Path, path: str) -> str:
    """`path` as the run knows it: relative to its output folder (`.` for the folder)."""
    relative = os.path.relpath(path, folder)
    return "the folder itself" if relative == "." else repr(relative)[1:-1]
