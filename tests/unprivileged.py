"""Running a command as a non-root user, the runner's usual case (issue 29, finding 5).

Root reads, lists and deletes through any mode, so a folder a child made mode 000 only
bites a non-root runner. When the tests run as a non-root user (CI's runners) the command
runs as that user; as root it runs under `setpriv` as an unprivileged uid (nobody, 65534),
in a work folder that uid owns. Without setpriv, root cannot show it: skipped loudly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

UNPRIVILEGED_UID = 65534  # nobody


def runs_as_root() -> bool:
    return os.getuid() == 0


@contextmanager
def unprivileged_folder() -> Iterator[Path]:
    """A fresh folder the unprivileged user owns (its parents traversable by it); removed
    afterwards (as root: through any mode it was left with)."""
    folder = Path(tempfile.mkdtemp(prefix="compilegate-nonroot-", dir="/tmp"))
    try:
        if runs_as_root():
            if shutil.which("setpriv") is None:
                pytest.skip("NON-ROOT CASE NOT TESTED: running as root without setpriv")
            os.chown(folder, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        yield folder
    finally:
        if runs_as_root():
            shutil.rmtree(folder, ignore_errors=True)
        else:  # the test's own leftovers: opened up first, as the code under test must
            for path, dirs, _ in os.walk(folder):
                for name in dirs:
                    os.chmod(os.path.join(path, name), 0o700)
            shutil.rmtree(folder, ignore_errors=True)


def as_unprivileged(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    groups: Sequence[int] = (),
    timeout_s: float = 600,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `command` as the non-root user (see the module docstring); `groups`: the
    supplementary groups it keeps as root (the docker socket's group)."""
    argv = list(command)
    if runs_as_root():
        ids = [f"--reuid={UNPRIVILEGED_UID}", f"--regid={UNPRIVILEGED_UID}"]
        ids.append(f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups")
        argv = ["setpriv", *ids, "--", *argv]
    return subprocess.run(
        argv, env=dict(env), capture_output=True, text=True, timeout=timeout_s, check=False,
        cwd=cwd,
    )  # fmt: skip


def nonroot_python(
    env: Mapping[str, str],
    *,
    groups: Sequence[int] = (),
    cwd: Path | None = None,
    imports: str = "compilegate.cli, docker, yaml, jsonschema, requests",
) -> str:
    """An interpreter the non-root user can run compilegate with (`imports` importable):
    $COMPILEGATE_NONROOT_PYTHON, else this one; skipped loudly when that user cannot (as
    root here: this interpreter's packages may sit in root's home)."""
    python = os.environ.get("COMPILEGATE_NONROOT_PYTHON", sys.executable)
    probe = as_unprivileged(
        [python, "-c", f"import {imports}"],
        env=env, groups=groups, cwd=cwd, timeout_s=120,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(
            "NON-ROOT CASE NOT TESTED: the unprivileged user cannot run compilegate with "
            f"{python} (set COMPILEGATE_NONROOT_PYTHON): {probe.stderr.strip()[-300:]}"
        )
    return python
