"""Who the measuring children run as when compilegate runs inside the image (the image
backend: the job-container shape, docs/security.md).

A job container often runs as root (GitHub's container jobs and the Kubernetes hooks run the
image's user unless told otherwise, and checkouts need root where the work folder is the
runner's). The pull request's code then shares the container with compilegate's parent: run
as root it could read the parent's environment (/proc/PID/environ) and write every file the
job's later steps read. So where the parent is root, the image has a non-root user
(the Dockerfile's `compilegate`, uid 1000) and the container may change user (CAP_SETUID
and CAP_SETGID), each child runs as that user, in folders handed to it; elsewhere it runs
as the parent does, and a note says so. `decide_child_user` takes its facts through seams.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

IMAGE_USER = "compilegate"  # Dockerfile: useradd --uid 1000 ... compilegate
CAP_SETGID, CAP_SETUID = 6, 7  # linux/capability.h


@dataclass(frozen=True)
class ChildUser:
    """The user the children run as. `uid`/`gid` None: the parent's own (no switch).
    `reason`: switched, not-root (the parent is not root: nothing to switch from),
    no-user (the image has no such user), no-capability (the container may not switch)."""

    name: str
    uid: int | None
    gid: int | None
    reason: str
    current_uid: int

    @property
    def switched(self) -> bool:
        return self.reason == "switched"


def decide_child_user(
    name: str = IMAGE_USER,
    *,
    euid: Callable[[], int] = os.geteuid,
    lookup: Callable[[str], tuple[int, int] | None] | None = None,
    capabilities: Callable[[], int | None] | None = None,
) -> ChildUser:
    """Switch to `name` only where the parent is root, the user exists and the container
    grants the capabilities to switch."""
    current = euid()
    if current != 0:
        return ChildUser(name, None, None, "not-root", current)
    ids = (lookup or _lookup)(name)
    if ids is None or ids[0] == 0:
        return ChildUser(name, None, None, "no-user", current)
    effective = (capabilities or _effective_capabilities)()
    needed = (1 << CAP_SETUID) | (1 << CAP_SETGID)
    if effective is None or effective & needed != needed:
        return ChildUser(name, None, None, "no-capability", current)
    return ChildUser(name, ids[0], ids[1], "switched", current)


def hand_folder(folder: Path, user: ChildUser | None) -> None:
    """Make a folder the parent made (a child's HOME and scratch, a shared cache, the float64
    reference's) the children's: theirs to write when they run as another user."""
    if user is None or user.uid is None or user.gid is None:
        return
    for root, dirs, files in os.walk(folder):
        os.chown(root, user.uid, user.gid)
        for entry in (*dirs, *files):
            os.chown(os.path.join(root, entry), user.uid, user.gid, follow_symlinks=False)


def open_folder(folder: Path, user: ChildUser | None) -> None:
    """Let the children read (never write) a folder the parent made 0700 (mkdtemp): a
    paired run's base tree."""
    if user is None or user.uid is None:
        return
    for root, _dirs, files in os.walk(folder):
        os.chmod(root, os.stat(root).st_mode | 0o055)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o044)


def _lookup(name: str) -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def _effective_capabilities() -> int | None:
    """CapEff of this process (/proc/self/status), or None where it cannot be read."""
    try:
        text = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return None
