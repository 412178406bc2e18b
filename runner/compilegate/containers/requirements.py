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

What names the image (images.inputs_digest) is the file as pip reads it,
`normalized_requirements`: pip's own preprocessing (a line ending in `\\` joined to the next
unless it is a comment; `#` at the start or after a blank opens a comment; surrounding blanks
and empty lines dropped), then the option lines (`--index-url`, `-e`, ...) in the file's
order and the requirement lines sorted. pip applies a file's options to the whole install
wherever they stand, and resolves all requirements together; their order only breaks ties
while backtracking, no more than a build of the same file a week later picks other versions.
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
# pip's own (pip/_internal/req/req_file.py, COMMENT_RE).
_PIP_COMMENT = re.compile(r"(^|\s+)#.*$")


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


def normalized_requirements(data: bytes) -> str:
    """The requirements as pip reads them (module docstring), one per line; empty when the
    file holds nothing pip would act on. Bytes that are not UTF-8 stay as they are."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data.hex()
    options: list[str] = []
    requirements: list[str] = []
    for line in _pip_lines(text):
        (options if line.startswith("-") else requirements).append(line)
    return "".join(f"{line}\n" for line in [*options, *sorted(requirements)])


def _pip_lines(text: str) -> list[str]:
    """pip's preprocessing of a requirements file (req_file.join_lines, ignore_comments):
    continuations joined as pip joins them (no blank added), comments cut, blanks around
    each line and empty lines dropped."""
    joined: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        if not line.endswith("\\") or _PIP_COMMENT.match(line):
            if _PIP_COMMENT.match(line):
                line = " " + line  # so that the comment is cut below
            joined.append("".join([*pending, line]))
            pending = []
        else:
            pending.append(line.strip("\\"))
    if pending:
        joined.append("".join(pending))
    cut = (_PIP_COMMENT.sub("", line).strip() for line in joined)
    return [line for line in cut if line]


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
