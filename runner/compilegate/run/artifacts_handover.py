"""The compile-cache artifacts a variant's first process left, handed to a later one.

The first process (code under test: hostile) wrote child/cache_artifacts.FILE_NAME into its
Inductor cache folder. The parent copies those bytes, uninterpreted, into the empty cache
folder of the process that starts from them: opened relative to the folder with O_NOFOLLOW
and O_NONBLOCK, checked to be a regular file of at most MAX_BYTES (a link, a FIFO, a device
or a larger file is refused, never followed or read), written to a new file (O_EXCL).

The copy keeps the blob's holes (SEEK_DATA/SEEK_HOLE): only the extents the first process
wrote are read and written, so a sparse 2 GiB file of no blocks costs the host no 2 GiB of
writes (issue 51: 15.7 s and 7.7 CPU-s). MAX_BYTES is not lowered to what this machine's
blobs measure (0.9 MB for a CPU step), because a large model's GPU kernels are not measured
here and refusing them would cost that variant its artifacts process; what the host writes is
what the first process wrote, at most MAX_BYTES. On a file system without SEEK_DATA the whole
file is one extent (the kernel's own fallback), as before.
"""

from __future__ import annotations

import errno
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
            return Handover(copied=_copy(fd, target_cache / FILE_NAME, info.st_size))
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def _copy(fd: int, target: Path, size_bytes: int) -> int:
    """The first `size_bytes` of `fd` (its size when checked: a later growth is not copied)
    into a new file, extent by extent, its holes left holes; the size copied."""
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        for start, end in _data_extents(fd, size_bytes):
            offset = start
            while offset < end:
                chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
                if not chunk:  # the file shrank under us: the rest stays a hole
                    break
                os.pwrite(out, chunk, offset)
                offset += len(chunk)
        os.ftruncate(out, size_bytes)
    finally:
        os.close(out)
    return size_bytes


def _data_extents(fd: int, size_bytes: int) -> list[tuple[int, int]]:
    """(start, end) of each stretch of `fd` below `size_bytes` that holds data."""
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size_bytes)]
    extents = []
    position = 0
    while position < size_bytes:
        try:
            start = os.lseek(fd, position, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from here to the end
                break
            if exc.errno == errno.EINVAL:  # a file system without it: all data
                return [(position, size_bytes)]
            raise
        if start >= size_bytes:
            break
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size_bytes)
        extents.append((start, end))
        position = end
    return extents
