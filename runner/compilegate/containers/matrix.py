"""Run the same `compilegate run` once per PyTorch version, each in its own environment.

Per version: prepare the environment (an image or a cached venv), run it against a fresh
staging folder, collect a clean copy of its `result.json` into
`<out_dir>/torch-<version>/result.json` (collect.py: the staging folder is hostile, and is
removed after the run; nothing but compilegate writes the results folder). A version whose
environment cannot be built or whose run writes no result becomes an error outcome; the other
versions still run. Merging the results into one report is the caller's (the CLI's) business.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from ..config.limits import ResourceLimits
from ..errors import UsageError
from .collect import collect_result, discard, staging_folder
from .outcome import Backend, EnvironmentBuildError, LogSink, RunRequest, VersionOutcome

# A release like 2.13.0, 2.6.0rc1, 2.5.0.dev20240901 or 2.13.0+cpu: it names a folder and a
# build argument, so nothing else gets through.
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)*(\.[a-z]+[0-9]+)*(\+[A-Za-z0-9.]+)?$")


def check_version(torch_version: str) -> str:
    """The version unchanged, or UsageError when it is not a plain PyTorch release string."""
    if not _VERSION.match(torch_version):
        raise UsageError(f"torch version {torch_version!r}: expected a release such as 2.13.0")
    return torch_version


def version_out_dir(out_dir: Path, torch_version: str) -> Path:
    return Path(out_dir) / f"torch-{check_version(torch_version)}"


def run_matrix(
    versions: Iterable[str],
    backend: Backend,
    *,
    config: Path,
    repo: Path,
    out_dir: Path,
    env: Mapping[str, str] | None = None,
    steps: Iterable[str] = (),
    extra_args: Iterable[str] = (),
    timeout_s: float = 3600.0,
    limits: ResourceLimits | None = None,
    log: LogSink = print,
) -> list[VersionOutcome]:
    """One outcome per distinct version, in the order given. `env` is the complete,
    allow-listed environment of each run (never the host's os.environ, never a token);
    `limits` bound each run's container (config/limits.under_baseline; default: defaults)."""
    ordered = [check_version(v) for v in dict.fromkeys(versions)]
    outcomes = []
    for torch_version in ordered:
        request = RunRequest(
            config=Path(config),
            repo=Path(repo),
            out_dir=version_out_dir(out_dir, torch_version),  # replaced by a staging folder
            env=dict(env or {}),
            steps=tuple(steps),
            extra_args=tuple(extra_args),
            timeout_s=timeout_s,
            limits=limits or ResourceLimits(),
        )
        outcomes.append(_run_version(torch_version, backend, request, log))
    return outcomes


def _run_version(
    torch_version: str, backend: Backend, request: RunRequest, log: LogSink
) -> VersionOutcome:
    prefix = f"[torch {torch_version}]"
    clean = _fresh_results_folder(request.out_dir)
    started = time.perf_counter()
    try:
        environment = backend.prepare(torch_version)
    except Exception as exc:  # EnvironmentBuildError, or the engine failing under us
        tail = exc.log_tail if isinstance(exc, EnvironmentBuildError) else ()
        message = (
            str(exc)
            if isinstance(exc, EnvironmentBuildError)
            else (
                f"torch {torch_version}: {backend.name} environment failed: "
                f"{type(exc).__name__}: {exc}"
            )
        )
        log(f"{prefix} error: {message}")
        return VersionOutcome(
            torch_version, "error", None, None, None, message,
            time.perf_counter() - started, 0.0, tuple(tail),
        )  # fmt: skip
    prepare_s = time.perf_counter() - started
    staging = staging_folder(torch_version)
    try:
        completed = backend.run(torch_version, replace(request, out_dir=staging))
    except Exception as exc:
        _discard(staging, prefix, log)
        message = f"torch {torch_version}: run failed: {type(exc).__name__}: {exc}"
        log(f"{prefix} error: {message}")
        return VersionOutcome(
            torch_version, "error", environment, None, None, message, prepare_s,
            time.perf_counter() - started - prepare_s,
        )  # fmt: skip
    collected = collect_result(staging, clean)
    _discard(staging, prefix, log)
    if collected.result_path is not None and completed.exit_code is not None:
        return VersionOutcome(
            torch_version, "ok", environment, collected.result_path, completed.exit_code,
            completed.error, prepare_s, completed.wall_s, completed.log_tail,
        )  # fmt: skip
    # Killed at the wall-clock limit: compilegate rewrites result.json after every child, so
    # a partial document may be there; it is kept (result_path) but the version is an error.
    partial = collected.result_path
    message = completed.error or f"compilegate exited {completed.exit_code}"
    what = "partial result kept" if partial else "no result written"
    if collected.refused:
        what = f"{what} ({collected.refused})"
    message = f"torch {torch_version}: {what}: {message}"
    log(f"{prefix} error: {message}")
    return VersionOutcome(
        torch_version, "error", environment, partial, completed.exit_code, message,
        prepare_s, completed.wall_s, completed.log_tail,
    )  # fmt: skip


def _discard(staging: Path, prefix: str, log: LogSink) -> None:
    """Remove the staging folder; what could not be removed is said, in one line."""
    left = discard(staging)
    if left is not None:
        log(f"{prefix} warning: {left}")


def _fresh_results_folder(folder: Path) -> Path:
    """The version's results folder, emptied of what an earlier run left (a result left
    there must not pass for this run's); a link in its place is removed, never followed."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder
