"""Removing a folder a measured child wrote into (standard library only).

The child runs as the user who owns the folder (on the host: the runner's user; in a
container on a non-root runner: the same uid), so it can leave a folder of mode 000, or one
without write permission, in it. `shutil.rmtree` cannot list or empty such a folder as a
non-root user, and with `ignore_errors=True` it left everything under it in the host's temp
folder, job after job (issue 29, finding 5). `remove_tree` gives every folder in the tree
back to its owner (u+rwx, links never followed: a link is removed, never chmodded) and
removes it; what it still cannot remove (another uid's files, a rootless engine's subuids)
it says in one line rather than hide. Called once the child is gone (its container removed,
its process group killed): nothing swaps a folder for a link between the lstat and the chmod.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any


def remove_tree(folder: Path) -> str | None:
    """Remove `folder` and everything in it, following no link; None when it is gone (or
    was never there), else one line saying what is left and why."""
    if not os.path.lexists(folder):
        return None
    if os.path.islink(folder) or not os.path.isdir(folder):
        try:
            os.unlink(folder)
        except OSError as exc:
            return f"could not remove {folder}: {exc.strerror}"
        return None
    _rmtree(folder, [])
    if not os.path.lexists(folder):
        return None
    _give_back(folder)
    failures: list[tuple[str, OSError]] = []
    _rmtree(folder, failures)
    if not os.path.lexists(folder):
        return None
    if not failures:
        return f"could not remove {folder}"
    path, failure = failures[0]
    return f"could not remove {folder} ({failure.strerror}: {path!r})"[:1000]


def _give_back(folder: Path) -> None:
    """Add u+rwx to every real folder in the tree, top down (a folder must be opened up
    before what is in it can be listed); links and files are left alone."""
    stack = [os.fspath(folder)]
    while stack:
        path = stack.pop()
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode):
                continue
            if info.st_mode & stat.S_IRWXU != stat.S_IRWXU:
                os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
            with os.scandir(path) as entries:
                stack.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:  # another uid's folder: the second rmtree reports it
            continue


def _rmtree(folder: Path, failures: list[tuple[str, OSError]]) -> None:
    """shutil.rmtree, each failure recorded with the full path it was for (an error's own
    filename is relative to a folder's descriptor)."""

    def record(_function: Any, path: Any, error: Any) -> None:
        exc = error[1] if isinstance(error, tuple) else error  # onerror: exc_info
        if isinstance(exc, OSError):
            failures.append((os.fspath(path), exc))

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=record)  # novermin (3.12 and later, checked above)
    else:  # onerror: deprecated since 3.12, the only hook before it
        shutil.rmtree(folder, onerror=record)
