"""What a matrix run asks of a backend, and what it gets back per PyTorch version.

A backend (Docker image or cached virtual environment) is anything with `prepare` and `run`
(`Backend` below). Preparing an environment may fail — no such torch, no space, a broken
Dockerfile — with `EnvironmentBuildError`, which carries the last lines of the build log;
`matrix.run_matrix` turns that into an error outcome for that version only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..config.limits import ResourceLimits
from ..errors import CompilegateError

LogSink = Callable[[str], None]
"""Where a backend writes its progress and the streamed build/run output, one line a call."""


class EnvironmentBuildError(CompilegateError):
    """An image or virtual environment for one torch version could not be built.

    `log_tail` holds the last lines of the build output (the pip or Docker error is there).
    """

    def __init__(self, torch_version: str, message: str, log_tail: tuple[str, ...] = ()):
        self.torch_version = torch_version
        self.log_tail = tuple(log_tail)
        last = next((line for line in reversed(self.log_tail) if line.strip()), "")
        detail = f": {last.strip()}" if last and last.strip() not in message else ""
        super().__init__(f"torch {torch_version}: {message}{detail}")


@dataclass(frozen=True)
class RunRequest:
    """One `compilegate run`, as the backend must start it for one version.

    `config` and `repo` are host paths; `out_dir` is the version's own folder, where
    `result.json` is written. `env` is the complete environment the run gets beyond what the
    environment itself defines (the image's ENV, or the venv) — an allow-listed mapping the
    caller built, never the host's `os.environ` and never a token. `limits` bound the
    container (config/limits.py: the widest of its steps', under the trusted side's).
    """

    config: Path
    repo: Path
    out_dir: Path
    env: Mapping[str, str] = field(default_factory=dict)
    steps: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    timeout_s: float = 3600.0
    limits: ResourceLimits = field(default_factory=ResourceLimits)

    @property
    def result_path(self) -> Path:
        return self.out_dir / "result.json"


@dataclass(frozen=True)
class RunCompleted:
    """How the `compilegate run` process ended: its exit code (None when it was killed at
    the wall-clock limit or never started) and, when it did not end normally, why."""

    exit_code: int | None
    wall_s: float
    error: str | None = None
    log_tail: tuple[str, ...] = ()


class Backend(Protocol):
    """Prepares one environment per torch version and runs compilegate in it."""

    name: str

    def prepare(self, torch_version: str) -> str:
        """Build or reuse the environment; return what it is (image tag, venv path).

        Raises EnvironmentBuildError when it cannot be built.
        """
        ...

    def run(self, torch_version: str, request: RunRequest) -> RunCompleted:
        """Run `compilegate run` for this version in the prepared environment."""
        ...


@dataclass(frozen=True)
class VersionOutcome:
    """One torch version of a matrix: its result document, or why there is none.

    `status` is "ok" when `result.json` was written (compilegate's `exit_code` then says
    pass 0, regression 1 or a failed step 3, exactly as `compilegate run` would), "error"
    when the environment could not be built, the run produced no result, or it was stopped
    at the wall-clock limit (`result_path` then names the partial document, if any).
    """

    torch_version: str
    status: str
    environment: str | None
    result_path: Path | None
    exit_code: int | None
    error: str | None
    prepare_s: float
    run_s: float
    log_tail: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "ok"
