"""The container sees the step's files, never a git repository: every `.git` of the mounted
tree is covered.

A checkout's `.git` holds what no measured code should read: the token actions/checkout
persists in `.git/config` (issue 29: a head step read it and raised it into the comment),
remote URLs, the whole history. The tree is mounted read-only at /workspace as it is (a copy
of a large checkout per child would cost more than the run); then every `.git` found in it —
the repository's own folder, a linked worktree's `.git` file (paired mode's base tree),
another checkout or a submodule in a subfolder — gets a read-only bind mount of an empty
folder (or an empty file) over it. The engine mounts deeper targets after /workspace, so the
covers lie on top; a link in the tree that leads to a `.git` (`cfg -> .git/config`) resolves
inside the container, onto the cover.

The walk follows no link and does not enter a `.git`. A pull request cannot commit a `.git`
(git refuses the path); what it finds there, the workflow put there. An empty `.git` is what
host_git.find_repository takes for no repository, so `compilegate run` in the container
sees none.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

DOT_GIT = ".git"


def git_entries(tree: Path) -> list[PurePosixPath]:
    """Every `.git` under `tree` (a folder or a file; never a link), relative to it."""
    found: list[PurePosixPath] = []

    def refuse_to_stop(error: OSError) -> None:  # an unreadable folder: nothing mounted there
        return None

    for folder, dirs, files in os.walk(tree, onerror=refuse_to_stop, followlinks=False):
        relative = PurePosixPath(Path(folder).relative_to(tree).as_posix())
        if DOT_GIT in dirs:
            dirs.remove(DOT_GIT)
            if not os.path.islink(os.path.join(folder, DOT_GIT)):
                found.append(relative / DOT_GIT)
        if DOT_GIT in files and not os.path.islink(os.path.join(folder, DOT_GIT)):
            found.append(relative / DOT_GIT)
    return found


def cover_mounts(tree: Path, target: str) -> list[Any]:
    """Read-only bind mounts (docker.types.Mount) of an empty folder or file over every
    `.git` of `tree`, as mounted at `target` in the container."""
    from docker.types import Mount

    empty_dir, empty_file = _covers()
    mounts = []
    for entry in git_entries(Path(tree)):
        source = empty_dir if (Path(tree) / entry).is_dir() else empty_file
        mounts.append(
            Mount(f"{target}/{entry.as_posix()}", str(source), type="bind", read_only=True)
        )
    return mounts


def _covers() -> tuple[Path, Path]:
    """An empty folder and an empty file, this process's, for every container it starts;
    made again if something removed them, and removed when the process exits."""
    folder = _cover_folder()
    empty_dir, empty_file = folder / "dir", folder / "file"
    if not (empty_dir.is_dir() and empty_file.is_file()):
        _cover_folder.cache_clear()
        folder = _cover_folder()
        empty_dir, empty_file = folder / "dir", folder / "file"
    return empty_dir, empty_file


@functools.cache
def _cover_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="compilegate-git-cover-"))
    os.chmod(folder, 0o755)  # the engine reads it; nothing in it is secret
    (folder / "dir").mkdir(mode=0o555)
    (folder / "file").touch(mode=0o444)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
