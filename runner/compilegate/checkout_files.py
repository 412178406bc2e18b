"""Read a file of the checkout on the host: never through a link, only a regular file, capped.

A pull request chooses what its checkout holds, symbolic links included: `compilegate.yml ->
/dev/zero` would have the host read without end, `requirements.txt -> ~/.ssh/id_rsa` would
copy a runner's secret into an image build (whose log pip fills with it), and
`compilegate.yml -> ci/gate.yml` would make paired mode read another file of the base than the
one it names. So a file that lies inside the repository (by its path as given, `..` folded) is
opened from the repository's folder down, one component at a time, each with O_NOFOLLOW
(openat: nothing can swap a component for a link between a check and the open), and must be a
regular file of at most `max_bytes`. A file outside the repository is the operator's own,
named on the command line (e.g. a config kept beside the checkout): its folders are taken as
given, but it too must be a regular file, not a link, within the cap.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePath

from .errors import CompilegateError, UsageError

# The caps: a compilegate.yml or a requirements file is a few kilobytes; a step's source file
# a few hundred. Anything larger is a mistake or an attack, never worth reading. A config is
# parsed by PyYAML in pure Python, about 30 s of CPU a megabyte (issue 38): 256 KiB holds
# some thousand steps, 350 times the largest example config (731 bytes).
CONFIG_MAX_BYTES = 256 << 10
REQUIREMENTS_MAX_BYTES = 1 << 20
STEP_SOURCE_MAX_BYTES = 4 << 20

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def path_in_repository(path: Path, repo_root: Path) -> PurePath | None:
    """`path` relative to `repo_root` by their names (`..` folded, links not followed), or
    None when it lies outside. The root may be given through links (`/tmp` on macOS): both
    its spelling and its resolved path count."""
    absolute = Path(os.path.abspath(path))
    for root in dict.fromkeys((Path(os.path.abspath(repo_root)), Path(repo_root).resolve())):
        try:
            relative = absolute.relative_to(root)
        except ValueError:
            continue
        return relative
    return None


def read_checkout_file(
    path: Path,
    repo_root: Path,
    *,
    max_bytes: int,
    shown: str | None = None,
    error: type[CompilegateError] = UsageError,
) -> bytes:
    """The bytes of `path` (module docstring's rules). Every refusal is one line, `error`
    (exit 2 by default), starting with `shown` (default: the path as given)."""
    shown = shown or str(path)
    relative = path_in_repository(path, repo_root)
    if relative is not None and not relative.parts:
        raise error(f"{shown}: is the repository's folder, not a file")
    try:
        if relative is None:
            fd = _open_file(os.path.abspath(path), None, shown, error)
        else:
            fd = _open_inside(Path(repo_root).resolve(), relative, shown, error)
    except OSError as exc:
        raise error(f"{shown}: cannot open: {exc.strerror or exc}") from None
    try:
        return _read_capped(fd, max_bytes, shown, error)
    finally:
        os.close(fd)


def _open_inside(root: Path, relative: PurePath, shown: str, error: type[CompilegateError]) -> int:
    """Open `relative` from the folder `root`, component by component, following no link."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        walked = PurePath()
        for part in relative.parts[:-1]:
            walked = walked / part
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as exc:
                _refuse_component(exc, part, dir_fd, walked, shown, error, folder=True)
                raise
            os.close(dir_fd)
            dir_fd = next_fd
        return _open_file(relative.parts[-1], dir_fd, shown, error, relative)
    finally:
        os.close(dir_fd)


def _open_file(
    name: str,
    dir_fd: int | None,
    shown: str,
    error: type[CompilegateError],
    relative: PurePath | None = None,
) -> int:
    try:
        return os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        _refuse_component(exc, name, dir_fd, relative or PurePath(name), shown, error)
        raise


def _refuse_component(
    exc: OSError,
    name: str,
    dir_fd: int | None,
    walked: PurePath,
    shown: str,
    error: type[CompilegateError],
    *,
    folder: bool = False,
) -> None:
    """Turn an open's failure into the one-line refusal that says why."""
    if exc.errno == errno.ENOENT:
        raise error(f"{shown}: no such file") from None
    try:
        is_link = stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link:
        raise error(
            f"{shown}: {walked} is a symbolic link: compilegate reads the checkout's files "
            "where they are, never through a link (name the file itself)"
        ) from None
    if folder and exc.errno == errno.ENOTDIR:
        raise error(f"{shown}: {walked} is not a folder") from None


def _read_capped(fd: int, max_bytes: int, shown: str, error: type[CompilegateError]) -> bytes:
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        kind = "a folder" if stat.S_ISDIR(status.st_mode) else "not a regular file"
        raise error(f"{shown}: is {kind}: expected a regular file")
    if status.st_size > max_bytes:
        raise error(
            f"{shown}: {status.st_size} bytes, over the {_size(max_bytes)} a file of the "
            "checkout may have here"
        )
    chunks = []
    remaining = max_bytes + 1  # one byte more: a file that grew after fstat is caught too
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise error(f"{shown}: over the {_size(max_bytes)} a file of the checkout may have here")
    return data


def _size(max_bytes: int) -> str:
    return f"{max_bytes >> 20} MiB" if max_bytes >= 1 << 20 else f"{max_bytes} bytes"
