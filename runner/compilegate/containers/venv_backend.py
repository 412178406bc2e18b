"""Run `compilegate run` for one PyTorch version with a cached virtual environment, no Docker.

One environment per version under ~/.cache/compilegate/venvs/torch-X, made with
`python -m venv` and `pip install torch==X` and nothing else: compilegate itself stays in the
current interpreter and runs its children with `--python <venv python>`, which loads
compilegate's child code from its folder. The host's pip configuration applies to the install
(local wheel folders, CA bundle), as for any pip the user runs.

With the repository's requirements (`matrix --requirements`, read and checked once by
containers/requirements.py, the same file and rules as the Docker backend's), each version's
environment is torch-X-req-<digest> (the digest of the file as pip reads it and of whether
source builds are allowed), and they are installed into it after torch, as the image build
does: `pip install --only-binary=:all: --constraint <torch==X> --requirement <file>` (wheels
only unless --requirements-allow-source-builds; the constraint keeps this torch).

This backend gives the child an allow-listed environment but no isolation beyond that: the
user's code runs as the host user, with the host's network and files. It is for trusted code
(ARCHITECTURE.md, Security); pull-request code belongs in the Docker backend.
"""

from __future__ import annotations

import hashlib
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
from .requirements import ALLOW_SOURCE_BUILDS_FLAG, normalized_requirements

READY_MARKER = ".compilegate-ready"
REQUIREMENTS_FILE = "compilegate-requirements.txt"
TORCH_CONSTRAINT_FILE = "compilegate-torch-constraint.txt"
REQUIREMENTS_DIGEST_CHARS = 12
REQUIREMENTS_STEP = 2  # install_commands: the venv, torch, the requirements
WHEELS_ONLY_HINT = (
    f"only wheels are installed: a package with no wheel for this Python needs "
    f"{ALLOW_SOURCE_BUILDS_FLAG} (its build code then runs on this machine, with the network)"
)
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
        requirements: bytes | None = None,
        requirements_source_builds: bool = False,
        log: LogSink = print,
    ) -> None:
        """`requirements`: the repository's requirements file's bytes, read and checked from
        the checkout (containers/requirements.py), installed into each version's environment
        after torch; None or a file pip would find nothing in installs nothing."""
        self.venv_root = Path(venv_root) if venv_root is not None else default_venv_root()
        self.base_python = base_python
        self.rebuild = rebuild
        self.install_timeout_s = install_timeout_s
        wanted = normalized_requirements(requirements or b"")
        self.requirements = requirements if wanted else None
        self.requirements_source_builds = requirements_source_builds
        self.requirements_digest = (
            hashlib.sha256(
                f"{wanted}source builds {int(requirements_source_builds)}\n".encode()
            ).hexdigest()[:REQUIREMENTS_DIGEST_CHARS]
            if wanted
            else None
        )
        self.log = log

    def venv_dir(self, torch_version: str) -> Path:
        suffix = f"-req-{self.requirements_digest}" if self.requirements_digest else ""
        return self.venv_root / f"torch-{torch_version}{suffix}"

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
        steps = install_commands(
            self.base_python,
            venv,
            torch_version,
            with_requirements=self.requirements is not None,
            source_builds=self.requirements_source_builds,
        )
        if self.requirements is not None:  # `python -m venv` keeps them
            venv.mkdir()
            (venv / REQUIREMENTS_FILE).write_bytes(self.requirements)
            (venv / TORCH_CONSTRAINT_FILE).write_text(f"torch=={torch_version}\n")
        for number, command in enumerate(steps):
            completed = run_streaming(
                command, env=None, timeout_s=self.install_timeout_s, prefix=prefix, log=self.log
            )
            if completed.exit_code != 0:
                shutil.rmtree(venv, ignore_errors=True)
                reason = completed.error or f"{command[2]} exited {completed.exit_code}"
                if number == REQUIREMENTS_STEP:
                    hint = "" if self.requirements_source_builds else f" ({WHEELS_ONLY_HINT})"
                    failed = completed.error or f"exited {completed.exit_code}"
                    reason = f"--requirements: pip install {failed}{hint}"
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


def install_commands(
    base_python: str,
    venv: Path,
    torch_version: str,
    *,
    with_requirements: bool,
    source_builds: bool,
) -> list[list[str]]:
    """The commands that make one version's environment: the venv, torch, then (with
    requirements) the repository's requirements beside that torch, as the Docker image's
    build installs them: wheels only unless source builds are allowed, torch held to this
    version by a constraint file (the files are written into the venv before the install)."""
    python = str(venv / "bin" / "python")
    commands = [
        [base_python, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", f"torch=={torch_version}"],
    ]
    if with_requirements:
        binary = [] if source_builds else ["--only-binary=:all:"]
        constraint, requirements = str(venv / TORCH_CONSTRAINT_FILE), str(venv / REQUIREMENTS_FILE)
        commands.append(
            [python, "-m", "pip", "install", "--progress-bar", "off", *binary,
             "--constraint", constraint, "--requirement", requirements]
        )  # fmt: skip
    return commands


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
