"""Run `compilegate run` with the torch of the image compilegate runs in: no Docker, no venv
per version (`--backend image`).

The job-container shape (docs/security.md): on a runner pool whose jobs have no Docker
engine (ARC's kubernetes modes), the image the Dockerfile builds for one PyTorch version is
the job's container, and compilegate measures with the torch installed in it. One image
holds one version: a matrix over versions is a job matrix over images
(examples/workflows/pool.yml); here a `--torch` other than the image's is that version's
error row, never a silent run of another torch.

The children keep their allow-listed environment (run/child_env.py) and, where the parent is
root, run as the image's non-root user (run/child_user.py): `compilegate run --backend image`
decides that. The CI venv acts as the image in the tests: "the image" is whichever
interpreter holds torch here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ..containers.shape import installed_torch_version
from .outcome import EnvironmentBuildError, LogSink, RunCompleted, RunRequest
from .venv_backend import PACKAGE_PARENT, run_command, run_streaming

PROBE_TIMEOUT_S = 30
_VERSION_PROBE = "import importlib.metadata as m; print(m.version('torch'))"


def torch_version_of(python: str) -> str | None:
    """The torch `python` would import (its metadata, no import), or None: none installed,
    or not an interpreter."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        return installed_torch_version()
    try:
        done = subprocess.run(
            [python, "-I", "-c", _VERSION_PROBE],
            capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = done.stdout.strip()
    return text if done.returncode == 0 and text else None


def find_image_python() -> tuple[str, str] | None:
    """The interpreter that holds the image's torch, and that torch's version: this one, else
    `python3` on PATH (the image's /opt/compilegate, when compilegate itself was installed
    apart, as the action installs it)."""
    for candidate in (sys.executable, shutil.which("python3")):
        if candidate:
            version = torch_version_of(candidate)
            if version is not None:
                return candidate, version
    return None


def same_release(asked: str, installed: str) -> bool:
    """2.13.0 asks for 2.13.0+cpu or +cu130 alike; a local part asked for must match."""
    if "+" in asked:
        return asked == installed
    return asked == installed.split("+", 1)[0]


class ImageBackend:
    """The image's own torch, for the one version it holds."""

    name = "image"

    def __init__(self, *, python: str, torch_version: str, log: LogSink = print) -> None:
        self.python = python
        self.torch_version = torch_version
        self.log = log

    def prepare(self, torch_version: str) -> str:
        if not same_release(torch_version, self.torch_version):
            raise EnvironmentBuildError(
                torch_version,
                f"backend image measures with the torch installed here ({self.torch_version}, "
                f"{self.python}), not {torch_version}: one job per version, each in that "
                "version's image (examples/workflows/pool.yml)",
            )
        self.log(f"[torch {torch_version}] the image's torch {self.torch_version}: {self.python}")
        return f"{self.python} (torch {self.torch_version})"

    def run(self, torch_version: str, request: RunRequest) -> RunCompleted:
        request.out_dir.mkdir(parents=True, exist_ok=True)
        command = run_command(sys.executable, self.python, request)
        command += ["--backend", "image"]
        env = dict(request.env)  # the allow-listed environment the caller built
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(PACKAGE_PARENT), env.get("PYTHONPATH", "")) if p
        )
        return run_streaming(
            command,
            env=env,
            timeout_s=request.timeout_s,
            prefix=f"[torch {torch_version}]",
            log=self.log,
        )
