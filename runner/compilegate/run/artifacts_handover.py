"""The compile-cache artifacts a variant's first process left, handed to a later one.

The first process (code under test: hostile) wrote child/cache_artifacts.FILE_NAME into its
Inductor cache folder. The parent copies those bytes, uninterpreted, into the empty cache
folder of the process that starts from them: opened relative to the folder with O_NOFOLLOW
and O_NONBLOCK, checked to be a regular file of at most MAX_BYTES (a link, a FIFO, a device
or a larger file is refused, never followed or read), written to a new file (O_EXCL).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..child.protocol import CACHE_ARTIFACTS_FILE as FILE_NAME

# Inductor's, AOTAutograd's and Triton's entries for one training step: megabytes on the
# CPU, tens of megabytes for a large model's kernels on a GPU. Far above, it is not ours.
MAX_BYTES = 2 * 1024**3
_CHUNK = 1024**2
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Handover:
    """`copied` bytes, or why not: `missing` (the first process saved none: its record says
    why) or `refused` (what the folder held was not a blob to copy)."""

    copied: int | None = None
    missing: bool = False
    refused: str | None = None


def hand_over(source_cache: Path, target_cache: Path) -> Handover:
    """Copy the blob from `source_cache` into `target_cache` (module docstring)."""
    try:
        folder = os.open(source_cache, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        return Handover(refused=f"the first process's cache folder: {exc.strerror}")
    try:
        try:
            fd = os.open(FILE_NAME, _READ, dir_fd=folder)
        except FileNotFoundError:
            return Handover(missing=True)
        except OSError as exc:  # ELOOP: a link
            return Handover(refused=f"{FILE_NAME}: not a regular file ({exc.strerror})")
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return Handover(refused=f"{FILE_NAME}: not a regular file")
            if info.st_size > MAX_BYTES:
                return Handover(refused=f"{FILE_NAME}: larger than {MAX_BYTES} bytes")
            return Handover(copied=_copy(fd, target_cache / FILE_NAME))
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def _copy(fd: int, target: Path) -> int:
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    copied = 0
    with os.fdopen(out, "wb") as handle:
        while copied <= MAX_BYTES:  # the file may grow after fstat
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            handle.write(chunk)
            copied += len(chunk)
    return copied
