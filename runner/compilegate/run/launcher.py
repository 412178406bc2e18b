"""Run one measurement in a child process: fresh Inductor cache, timeout, crash capture.

The child may run under another interpreter (`--python`), which need not have compilegate
installed: the bootstrap loads the package straight from its folder, without putting that
folder's parent (maybe a site-packages with another torch) on sys.path.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..child.protocol import PROGRESS_PREFIX

PACKAGE_DIR = Path(__file__).resolve().parents[1]

BOOTSTRAP = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location(
    "compilegate", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]])
module = importlib.util.module_from_spec(spec)
sys.modules["compilegate"] = module
spec.loader.exec_module(module)
from compilegate.child.main import main
main(sys.argv[2])
"""

# Variables that would change what or how the child measures behind our back.
SCRUBBED_ENV = (
    "TORCH_LOGS",
    "TORCH_TRACE",
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCH_COMPILE_DEBUG",
    "TORCHDYNAMO_DISABLE",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "INPUT_GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
TAIL_LINES = 40


@dataclass
class ChildOutcome:
    """What came back: the child's document, or why there is none."""

    document: dict[str, Any] | None
    error: str | None
    last_phase: str = ""
    output_tail: list[str] = field(default_factory=list)
    wall_s: float = 0.0


@dataclass(frozen=True)
class ChildLauncher:
    python: str = sys.executable
    shared_cache_dir: Path | None = None
    show_output: bool = False
    stream: TextIO = sys.stderr

    def run(
        self,
        spec: dict[str, Any],
        *,
        label: str,
        timeout_s: float,
        cache_dir: Path | None = None,
    ) -> ChildOutcome:
        """Run one child. Its Inductor cache is `cache_dir` when given (a variant's later
        processes reuse the cache its first process compiled into), else the shared one,
        else a fresh one that goes with the child."""
        import time

        workdir = Path(tempfile.mkdtemp(prefix="compilegate-"))
        try:
            cache_dir = cache_dir or self.shared_cache_dir or workdir / "inductor-cache"
            spec = {**spec, "out": str(workdir / "out.json"), "label": label}
            spec_path = workdir / "spec.json"
            spec_path.write_text(json.dumps(spec), encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
            env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
            env["TRITON_CACHE_DIR"] = str(Path(cache_dir) / "triton")
            env["PYTHONUNBUFFERED"] = "1"
            started = time.perf_counter()
            outcome = self._spawn(
                [self.python, "-c", BOOTSTRAP, str(PACKAGE_DIR), str(spec_path)],
                env=env,
                cwd=spec.get("repo_root"),
                timeout_s=timeout_s,
            )
            outcome.wall_s = time.perf_counter() - started
            out_path = Path(spec["out"])
            if outcome.error is None:
                if out_path.is_file():
                    outcome.document = json.loads(out_path.read_text(encoding="utf-8"))
                else:
                    outcome.error = "child process exited without writing its result"
            if outcome.error is not None:
                where = f" while {outcome.last_phase}" if outcome.last_phase else ""
                outcome.error += where
            return outcome
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _spawn(
        self, argv: list[str], *, env: dict[str, str], cwd: str | None, timeout_s: float
    ) -> ChildOutcome:
        try:
            process = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
        except OSError as exc:
            return ChildOutcome(None, f"cannot start {argv[0]}: {exc.strerror}")
        outcome = ChildOutcome(None, None)
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        reader = threading.Thread(target=self._relay, args=(process, outcome, tail), daemon=True)
        reader.start()
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.wait()
            reader.join(timeout=5)
            outcome.output_tail = list(tail)
            outcome.error = f"timed out after {timeout_s:g} s (timeout_s)"
            return outcome
        reader.join(timeout=5)
        outcome.output_tail = list(tail)
        if returncode < 0:
            name = signal.Signals(-returncode).name
            outcome.error = f"child process crashed with signal {name} ({-returncode})"
        elif returncode != 0:
            last = next((line for line in reversed(tail) if line.strip()), "")
            outcome.error = f"child process exited with code {returncode}" + (
                f": {last.strip()}" if last else ""
            )
        return outcome

    def _relay(
        self, process: subprocess.Popen[str], outcome: ChildOutcome, tail: collections.deque[str]
    ) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            line = line.rstrip("\n")
            if line.startswith(PROGRESS_PREFIX):
                message = line[len(PROGRESS_PREFIX) :]
                outcome.last_phase = message.split("] ", 1)[-1]
                self.stream.write(f"  {message}\n")
                self.stream.flush()
            else:
                tail.append(line)
                if self.show_output:
                    self.stream.write(f"    | {line}\n")


def _kill_group(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
