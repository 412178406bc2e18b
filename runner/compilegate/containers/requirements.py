"""The user's requirements file: read from the checkout once, on the host, and checked before
it reaches an image build.

It is read through checkout_files (no link, a regular file inside the repository, at most
REQUIREMENTS_MAX_BYTES); its bytes, not its path, go into the build context. The build
installs wheels only (`pip install --only-binary :all:`, the Dockerfile): a wheel is unpacked,
never run, while an sdist's or a VCS checkout's build code runs at image build time, with the
network, before any sandbox. pip lets a requirements file override that from inside
(`--no-binary :all:` on a line of its own wins over the command line; `name @ URL`, a path,
`-e` are built whatever --only-binary says: measured with pip 23.2), so unless source builds
are allowed each line must be a plain requirement (name, extras, versions, markers, `--hash`)
or one of the few index options that cannot make pip build.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..checkout_files import REQUIREMENTS_MAX_BYTES, read_checkout_file
from ..errors import UsageError

ALLOW_SOURCE_BUILDS_FLAG = "--requirements-allow-source-builds"
# Options a line may hold with wheels only: where to look, never what to build.
_SAFE_OPTIONS = ("-i", "--index-url", "--extra-index-url", "--pre", "--prefer-binary")
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\s*(\[[^\]]*\])?")
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def read_requirements(path: Path, repo_root: Path, *, allow_source_builds: bool) -> bytes:
    """The requirements file's bytes, refused in one line (exit 2) naming the file (and the
    line) when it is not a regular file of the repository or, with wheels only, a line could
    make pip build from source."""
    shown = f"--requirements {path}"
    data = read_checkout_file(path, repo_root, max_bytes=REQUIREMENTS_MAX_BYTES, shown=shown)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{shown}: not UTF-8 ({exc.reason})") from None
    if not allow_source_builds:
        for number, line in _logical_lines(text):
            problem = source_build_risk(line)
            if problem is not None:
                raise UsageError(
                    f"{path}:{number}: {problem}: only wheels are installed from requirements "
                    f"({ALLOW_SOURCE_BUILDS_FLAG} lets a package's build code run at image build "
                    "time, with the network)"
                )
    return data


def source_build_risk(line: str) -> str | None:
    """Why pip could build this requirements line from source despite --only-binary, or None."""
    words = line.split()
    if not words:
        return None
    if words[0].startswith("-"):
        option = words[0].split("=", 1)[0]
        if option in _SAFE_OPTIONS:
            return None
        return f"the option {option} is refused"
    match = _NAME.match(line)
    if match is None:
        return f"{words[0]!r} is not a package name (a path or URL is built from source)"
    rest = line[match.end() :].lstrip()
    name = match.group(0).strip()
    if rest.startswith("@") or "://" in line:
        return f"{name}: a direct reference (name @ URL) is built from source"
    if name.lower().endswith(_ARCHIVE_SUFFIXES) or rest.startswith(("/", ".")):
        return f"{words[0]!r}: a file or path is built from source"
    for word in words[1:]:
        if word.startswith("-") and not word.startswith("--hash"):
            return f"the option {word.split('=', 1)[0]} is refused"
    return None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement, comments cut and `\\` continuations
    joined, as pip reads them."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        joined = re.sub(r"(^|\s)#.*$", "", " ".join(pending)).strip()
        pending = []
        if joined:
            lines.append((start, joined))
    if pending:
        joined = re.sub(r"(^|\s)#.*$", "", " ".join(pending)).strip()
        if joined:
            lines.append((start, joined))
    return lines
