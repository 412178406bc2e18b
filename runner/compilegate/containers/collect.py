"""A run's output folder is hostile input: read from it as from an attacker's disk.

The measured code runs as the user who owns the run's output folder (in a container: the
uid that may write /out; with the venv backend: the runner's own user). It can plant links
there (`result.json → ~/.credentials`, `error.txt → the venv's compilegate script`), FIFOs
that block a reader, huge files, or delete what compilegate wrote and kill compilegate. And
the folder's host path is no secret (a container sees it in /proc/self/mountinfo). So:

- the folder a run writes into is a fresh staging folder outside the results folder
  (`staging_folder`); the results folder, which is uploaded, is written by compilegate only;
- from the staging folder exactly one name is read, `result.json`, and only when it is a
  regular file of at most `MAX_RESULT_BYTES` (the size limit of every document read across
  a trust boundary, bounded_json.py; whoever reads the copy checks the rest): opened with
  O_NOFOLLOW | O_NONBLOCK relative to a descriptor of the folder opened with O_DIRECTORY |
  O_NOFOLLOW, checked with fstat — no link is ever followed, no FIFO or device read;
- its bytes are copied into the results folder (`collect_result`), and the host never
  writes into the staging folder after the run: it is removed (`discard`: cleanup.py, which
  unlinks links without following them and opens up folders the run made unreadable).
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..bounded_json import DOCUMENT_LIMITS
from ..cleanup import remove_tree

RESULT_NAME = "result.json"
MAX_RESULT_BYTES = DOCUMENT_LIMITS.max_bytes


@dataclass(frozen=True)
class Collected:
    """The clean copy of the run's result (None when there was none to take), or why not."""

    result_path: Path | None
    refused: str | None = None


def staging_folder(torch_version: str) -> Path:
    """A new, private (0700) folder outside any results folder for one run to write into."""
    return Path(tempfile.mkdtemp(prefix=f"compilegate-out-{torch_version}-"))


def collect_result(
    staging: Path, destination: Path, *, max_bytes: int = MAX_RESULT_BYTES
) -> Collected:
    """Copy `staging/result.json` to `destination/result.json` when it is a regular file of
    at most `max_bytes`; never follows a link. `destination` is the host's own folder."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        folder = os.open(staging, flags | os.O_DIRECTORY)
    except OSError as exc:
        return Collected(None, f"output folder unusable ({exc.strerror})")
    try:
        try:
            fd = os.open(RESULT_NAME, flags | os.O_NONBLOCK, dir_fd=folder)
        except FileNotFoundError:
            return Collected(None)
        except OSError as exc:  # ELOOP: a symbolic link
            return Collected(None, f"{RESULT_NAME} refused: not a regular file ({exc.strerror})")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return Collected(None, f"{RESULT_NAME} refused: not a regular file")
            if info.st_size > max_bytes:
                return Collected(None, f"{RESULT_NAME} refused: larger than {max_bytes} bytes")
            data = _read_at_most(fd, max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            return Collected(None, f"{RESULT_NAME} refused: larger than {max_bytes} bytes")
    finally:
        os.close(folder)
    destination.mkdir(parents=True, exist_ok=True)
    target = destination / RESULT_NAME
    partial = destination / f".{RESULT_NAME}.partial"
    partial.unlink(missing_ok=True)
    with open(partial, "xb") as out:  # x: never through something already there
        out.write(data)
    os.replace(partial, target)
    return Collected(target)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def discard(staging: Path) -> str | None:
    """Remove the staging folder and whatever the run left in it, following no link; None
    when it is gone, else one line saying what is left (cleanup.remove_tree)."""
    return remove_tree(staging)
