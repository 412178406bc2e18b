"""Each measuring child in a fresh container: the launcher of a paired run whose sides are
pull-request code (`matrix --against REF`, `matrix --paired` with the docker backend).

A paired run alternates single child processes between its sides, so the sides cannot each
be one long `compilegate run` in a container (docker_backend.py). Instead the parent, on
the host, schedules the children (run/step_measurement.py) and `ContainerLauncher.run` —
a run/launcher.Launcher — starts every one of them in its own
container of its side's image, with the isolation of a container run:

- the child's tree read-only at /workspace, every `.git` in it covered by an empty one
  (hidden_git.py: the head's repository, the base worktree's link); its spec read-only; a
  fresh HOME, its own output folder and its Inductor cache (a variant's later processes
  reuse the one its first compiled into, never another side's) writable — no other host
  path;
- `network_mode="none"`, a non-root user, no capabilities, no privilege escalation, an init;
- the step's memory, pids and log limits (spec `limits`, config/limits.py): over one, the
  child is an error naming it; its harness folder over `output_mib` (or made unreadable)
  is not read, and is removed afterwards whatever modes the child left (cleanup.py);
- its budget (run/child_budget.py): `timeout_s` CPU seconds of the container's processes
  (the engine's stats), and a wall cap for a child that waits without using CPU;
- the environment: the container allow-list (child_env.container_environment) and the
  harness's own variables, never the host's paths or a token;
- the output folder is hostile: only `result.json`, a regular file, is read, without
  following links (collect.py); the container is always removed, and killed past the
  child's budget or when the parent is interrupted.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, TextIO

from ..child.protocol import ChildReport, ChildSpec, new_progress_token
from ..cleanup import remove_tree
from ..config.limits import ResourceLimits
from ..run.child_budget import ChildBudget, wait_within
from ..run.child_env import container_environment, harness_variables
from ..run.child_failure import BadResult, ChildCause, Exited, NoResult, NotStarted, budget_cause
from ..run.child_process import TAIL_LINES, ChildOutcome
from ..run.launcher import read_report_file, relay_output
from ..run.machine_reading import cuda_visible
from ..run.relay import bounded_lines
from .collect import RESULT_NAME, collect_result
from .docker_backend import IMAGE_UID, STOP_GRACE_S, WORKSPACE
from .hidden_git import cover_mounts
from .limits import PidsWatch, limit_cause, limit_kwargs, output_over

IMAGE_PYTHON = "/opt/compilegate/bin/python"  # the image's venv: torch and compilegate
HARNESS = "/harness"  # spec, home, output folder
CACHE = "/inductor-cache"
# /dev/shm of a distributed step's container (its ranks' NCCL transport; counted in its memory).
DISTRIBUTED_SHM = "1g"
# The child's entry, with the working directory (the repository) off sys.path first, as the
# host launcher's bootstrap does: a repository file named like a standard-library module
# must not replace the harness's imports.
BOOTSTRAP = """\
import sys
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
from compilegate.child.main import main
main(sys.argv[1])
"""


@dataclass(frozen=True)
class ContainerLauncher:
    """Starts measuring children, each in a fresh container of `image`."""

    # The children are the engine's, not this process's: their CPU time is not ours to count
    # (run/machine_load.py); they see no host path but their tree, read-only.
    children_local: ClassVar[bool] = False
    shares_host_paths: ClassVar[bool] = False
    client: Any
    image: str
    device_requests: Sequence[Any] = ()
    stream: TextIO = field(default_factory=lambda: sys.stderr)  # at run time: defused
    show_output: bool = False
    host_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    shared_cache_dir: Path | None = None  # never shared: every side compiles into its own
    covered: dict[Path, list[Any]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def python(self) -> str:
        return f"{self.image}:{IMAGE_PYTHON}"

    def visible_gpus(self, total: int) -> tuple[int, ...]:
        """The indices of the host's `total` GPUs the children see: those the device
        requests give the container (--gpus: all, a count, device=ID,…; a GPU's UUID counts
        as one whose index is not known here: the first), then CUDA_VISIBLE_DEVICES inside."""
        given: list[int] = []
        for request in self.device_requests:
            count, ids = getattr(request, "count", None), getattr(request, "device_ids", None)
            if ids:
                given += [int(i) if str(i).isdigit() else 0 for i in ids]
            elif count == -1:
                given += range(total)
            elif isinstance(count, int):
                given += range(min(count, total))
        inside = cuda_visible(container_environment(self.host_env), len(given))
        return tuple(given[i] for i in inside)

    def run(
        self,
        spec: ChildSpec,
        *,
        label: str,
        timeout_s: float,
        env_opt_in: Sequence[str] = (),
        cache_dir: Path | None = None,
        wall_cap_s: float | None = None,
    ) -> ChildOutcome:
        """Run one child to completion in its own container (see the module docstring),
        within its budget: `timeout_s` CPU seconds of the container, a wall cap
        (run/child_budget.py)."""
        workdir = Path(tempfile.mkdtemp(prefix="compilegate-child-"))
        try:
            harness, cache = _prepare(workdir, cache_dir)
            repo = spec.repo_root
            token = new_progress_token()
            out = f"{HARNESS}/out/{RESULT_NAME}"
            inside = replace(spec, out=out, label=label, progress_token=token)
            if repo:
                inside = _in_workspace(inside, Path(repo))
            (harness / "spec.json").write_text(json.dumps(inside.to_json()), encoding="utf-8")
            volumes = {
                str(harness): {"bind": HARNESS, "mode": "rw"},
                str(cache): {"bind": CACHE, "mode": "rw"},
            }
            mounts = []
            if repo:
                volumes[str(Path(repo).resolve())] = {"bind": WORKSPACE, "mode": "ro"}
                mounts = self._covers(Path(repo).resolve())
            env = container_environment(self.host_env, env_opt_in)
            env.update(harness_variables(Path(f"{HARNESS}/home"), Path(CACHE), {}))
            limits = ResourceLimits.from_dict(spec.limits)
            started = time.perf_counter()
            outcome = self._run_container(
                volumes,
                mounts,
                env,
                ChildBudget.of(timeout_s, wall_cap_s),
                bool(repo),
                limits,
                token,
                distributed=bool(spec.settings.get("distributed")),
            )
            outcome.wall_s = time.perf_counter() - started
            over = output_over(harness, limits) if outcome.cause is None else None
            if over is not None:
                outcome.cause = BadResult("over", over)
            if outcome.cause is None:
                outcome.report, outcome.cause = _read_result(harness / "out", workdir)
            return outcome
        finally:
            left = remove_tree(workdir)
            if left is not None:
                self.stream.write(f"warning: {left}\n")

    def _covers(self, tree: Path) -> list[Any]:
        """The covers of the tree's `.git`s (hidden_git.py), found once per tree: a paired
        run starts many children in the same two trees."""
        if tree not in self.covered:
            self.covered[tree] = cover_mounts(tree, WORKSPACE)
        return self.covered[tree]

    def _run_container(
        self,
        volumes: dict[str, dict[str, str]],
        mounts: list[Any],
        env: dict[str, str],
        budget: ChildBudget,
        repo: bool,
        limits: ResourceLimits,
        progress_token: str,
        *,
        distributed: bool = False,
    ) -> ChildOutcome:
        kwargs: dict[str, Any] = {
            "image": self.image,
            "entrypoint": [IMAGE_PYTHON, "-c", BOOTSTRAP],
            "command": [f"{HARNESS}/spec.json"],
            "volumes": volumes,
            "mounts": mounts,
            "working_dir": WORKSPACE if repo else HARNESS,
            "environment": env,
            "network_mode": "none",
            "user": _user(),
            "init": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "detach": True,
            "auto_remove": False,
            "labels": {"compilegate.role": "child"},
            **limit_kwargs(limits),
        }
        if self.device_requests:
            kwargs["device_requests"] = list(self.device_requests)
        if distributed:  # NCCL's ranks talk through /dev/shm, 64 MiB by default in a container
            kwargs["shm_size"] = DISTRIBUTED_SHM
        outcome = ChildOutcome(None, None)
        try:
            container = self.client.containers.run(**kwargs)
        except Exception as exc:  # image gone, bad device request, engine error
            outcome.cause = NotStarted(None, " ".join(str(exc).split())[:300])
            return outcome
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        relay = threading.Thread(
            target=relay_output,
            args=(_log_lines(container), outcome, tail, self.stream),
            kwargs={"progress_token": progress_token, "show_output": self.show_output},
            daemon=True,
        )
        relay.start()
        watch = PidsWatch(container).start()
        try:
            waited: dict[str, Any] = {}
            try:
                passed = wait_within(
                    lambda seconds: _ended_within(container, seconds, waited),
                    lambda: container_cpu_s(container),
                    budget,
                )
            except BaseException:  # interrupted (RunInterrupted): the child must not outlive us
                _kill(container)
                raise
            if passed is not None:  # past its CPU budget or its wall cap
                _kill(container)
                relay.join(timeout=STOP_GRACE_S)
                outcome.output_tail = list(tail)
                outcome.cause = budget_cause(passed)
                return outcome
            status = waited["status"]
            relay.join(timeout=STOP_GRACE_S)
            outcome.output_tail = list(tail)
            code = int(status.get("StatusCode", -1))
            # Over a limit is an error whatever the exit code: a step that ran on after a
            # refused fork measured something else than what it declares.
            outcome.cause = limit_cause(container, limits, watch.stop())
            if outcome.cause is None and code != 0:
                last = next((line for line in reversed(tail) if line.strip()), "")
                outcome.cause = Exited(code, last.strip())
            return outcome
        finally:
            watch.stop()
            try:
                container.remove(force=True)
            except Exception:  # already gone
                pass


def _ended_within(container: Any, seconds: float, waited: dict[str, Any]) -> bool:
    """Wait at most `seconds` for the container; its status goes in `waited`."""
    try:
        waited["status"] = container.wait(timeout=seconds)
    except Exception:  # the engine's wait timed out (requests' ReadTimeout, …)
        return False
    return True


def container_cpu_s(container: Any) -> float | None:
    """CPU seconds the container's processes used so far (the engine's stats: its cgroup),
    or None where the engine does not say."""
    try:
        try:
            stats = container.stats(stream=False, one_shot=True)  # no second sample to wait for
        except TypeError:  # an older docker SDK: no one_shot
            stats = container.stats(stream=False)
        return int(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9
    except Exception:  # gone, or an engine without the figure
        return None


def _in_workspace(spec: ChildSpec, repo: Path) -> ChildSpec:
    """The spec's host paths as the container sees them: the tree at /workspace, the entry's
    file inside it."""
    entry = spec.entry
    if entry is not None and entry.file:
        relative = Path(entry.file).resolve().relative_to(repo.resolve())
        entry = replace(entry, file=f"{WORKSPACE}/{relative.as_posix()}")
    return replace(spec, repo_root=WORKSPACE, entry=entry)


def _log_lines(container: Any) -> Iterator[str]:
    """The container's output as lines cut to a bound (relay.bounded_lines)."""
    yield from bounded_lines(_log_chunks(container))


def _log_chunks(container: Any) -> Iterator[bytes]:
    try:
        yield from container.logs(stream=True, follow=True)
    except Exception:  # the container went away under us
        return


def _read_result(out_dir: Path, workdir: Path) -> tuple[ChildReport | None, ChildCause | None]:
    """The child's result, taken as collect.py takes a run's: the output folder is hostile."""
    collected = collect_result(out_dir, workdir / "clean")
    if collected.refused:
        return None, BadResult("collected", collected.refused)
    if collected.result_path is None:
        return None, NoResult()
    return read_report_file(collected.result_path)


def _prepare(workdir: Path, cache_dir: Path | None) -> tuple[Path, Path]:
    """The child's harness folder (spec, home, out) and its cache, writable by the
    container's user (the image's user when the host runs as root); the cache is
    `cache_dir` when given (a variant's processes share it), else a fresh one."""
    harness = workdir / "harness"
    cache = cache_dir or workdir / "cache"
    cache.mkdir(exist_ok=True)
    for folder in (harness, harness / "home", harness / "out"):
        folder.mkdir()
    for folder in (harness, harness / "home", harness / "out", cache):
        _hand_over(folder)
    return harness, cache


def _user() -> str:
    uid, gid = os.getuid(), os.getgid()
    return f"{IMAGE_UID}:{IMAGE_UID}" if uid == 0 else f"{uid}:{gid}"


def _hand_over(folder: Path) -> None:
    """As root, the image's user must write there (docker_backend.container_user)."""
    if os.getuid() == 0:
        os.chown(folder, IMAGE_UID, IMAGE_UID)


def _kill(container: Any) -> None:
    try:
        container.kill()
    except Exception:  # already stopped
        pass
