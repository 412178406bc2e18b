"""Run `compilegate run` for one PyTorch version with a cached virtual environment, no Docker.

One environment per version under ~/.cache/compilegate/venvs/torch-X, made with
`python -m venv` and `pip install torch==X` and nothing else: compilegate itself stays in the
current interpreter and runs its children with `--python <venv python>`, which loads
compilegate's child code from its folder. The host's pip configuration applies to the install
(local wheel folders, CA bundle), as for any pip the user runs.

This backend gives the child an allow-listed environment but no isolation beyond that: the
user's code runs as the host user, with the host's network and files. It is for trusted code
(ARCHITECTURE.md, Security); pull-request code belongs in the Docker backend.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..run.relay import bounded_lines, neutralise, read_chunks
from .outcome import EnvironmentBuildError, LogSink, RunCompleted, RunRequest

READY_MARKER = ".compilegate-ready"
LOG_TAIL_LINES = 40
INSTALL_TIMEOUT_S = 3600.0
KILL_GRACE_S = 10.0
# compilegate's own package folder's parent: put on PYTHONPATH so `-m compilegate` in the
# subprocess is this very compilegate, installed or run from a checkout.
PACKAGE_PARENT = Path(__file__).resolve().parents[2]


def default_venv_root() -> Path:
    return Path.home() / ".cache" / "compilegate" / "venvs"


class VenvBackend:
    """One cached virtual environment per torch version; runs compilegate with `--python`."""

    name = "venv"

    def __init__(
        self,
        *,
        venv_root: Path | None = None,
        base_python: str = sys.executable,
        rebuild: bool = False,
        install_timeout_s: float = INSTALL_TIMEOUT_S,
        log: LogSink = print,
    ) -> None:
        self.venv_root = Path(venv_root) if venv_root is not None else default_venv_root()
        self.base_python = base_python
        self.rebuild = rebuild
        self.install_timeout_s = install_timeout_s
        self.log = log

    def venv_dir(self, torch_version: str) -> Path:
        return self.venv_root / f"torch-{torch_version}"

    def python(self, torch_version: str) -> Path:
        return self.venv_dir(torch_version) / "bin" / "python"

    def prepare(self, torch_version: str) -> str:
        """Reuse the environment when it was completed before; otherwise (re)create it."""
        prefix = f"[torch {torch_version}]"
        venv = self.venv_dir(torch_version)
        if (venv / READY_MARKER).is_file() and not self.rebuild:
            self.log(f"{prefix} reusing {venv}")
            return str(venv)
        if venv.exists():
            shutil.rmtree(venv)
        venv.parent.mkdir(parents=True, exist_ok=True)
        self.log(f"{prefix} creating {venv}")
        started = time.perf_counter()
        steps: list[Sequence[str]] = [
            [self.base_python, "-m", "venv", str(venv)],
            [str(self.python(torch_version)), "-m", "pip", "install", f"torch=={torch_version}"],
        ]
        for command in steps:
            completed = run_streaming(
                command, env=None, timeout_s=self.install_timeout_s, prefix=prefix, log=self.log
            )
            if completed.exit_code != 0:
                shutil.rmtree(venv, ignore_errors=True)
                reason = completed.error or f"{command[2]} exited {completed.exit_code}"
                raise EnvironmentBuildError(
                    torch_version, f"virtual environment failed: {reason}", completed.log_tail
                )
        (venv / READY_MARKER).write_text(torch_version + "\n")
        self.log(f"{prefix} environment ready in {time.perf_counter() - started:.0f} s")
        return str(venv)

    def run(self, torch_version: str, request: RunRequest) -> RunCompleted:
        request.out_dir.mkdir(parents=True, exist_ok=True)
        command = run_command(sys.executable, str(self.python(torch_version)), request)
        env = dict(request.env)
        # The subprocess must import this compilegate; nothing else of the host's is added.
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


def run_command(compilegate_python: str, torch_python: str, request: RunRequest) -> list[str]:
    """`<python> -m compilegate run ... --python <venv python>` for one request."""
    command = [compilegate_python, "-m", "compilegate", "run"]
    command += ["--config", str(request.config), "--repo", str(request.repo)]
    command += ["--out", str(request.result_path), "--python", torch_python]
    for step in request.steps:
        command += ["--step", step]
    return command + list(request.extra_args)


def run_streaming(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None,
    timeout_s: float,
    prefix: str,
    log: LogSink,
) -> RunCompleted:
    """Run a command in its own process group, streaming its output with `prefix`; at the
    wall-clock limit the whole group is terminated, then killed. `env=None` inherits the
    host's environment (only for installs, never for a run)."""
    tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
    started = time.perf_counter()
    try:
        process = subprocess.Popen(
            list(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        return RunCompleted(None, 0.0, f"could not start {command[0]}: {exc}")

    def pump() -> None:
        assert process.stdout is not None
        for raw in bounded_lines(read_chunks(process.stdout)):  # a line of any length is cut
            line = neutralise(raw)
            tail.append(line)
            log(f"{prefix} {line}")

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        exit_code: int | None = process.wait(timeout=timeout_s)
        error = None
    except subprocess.TimeoutExpired:
        _kill_group(process)
        exit_code = None
        error = f"timed out after {timeout_s:.0f} s: process group killed"
    reader.join(timeout=KILL_GRACE_S)
    if error is None and exit_code not in (0, 1):
        last = next((line for line in reversed(tail) if line.strip()), "")
        error = f"exited {exit_code}" + (f": {last.strip()}" if last else "")
    return RunCompleted(exit_code, time.perf_counter() - started, error, tuple(tail))


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue
