"""Run `compilegate run` for one PyTorch version inside that version's image.

The container is the trust boundary for pull-request code (ARCHITECTURE.md, Security):
- the repository is bind-mounted read-only at /workspace, every `.git` in it covered by an
  empty one (hidden_git.py: never the token a checkout persists, nor its history), the
  version's output folder writable at /out, and (when the config lives outside the
  repository) the config file read-only at /etc/compilegate/compilegate.yml — no other
  host path;
- `network_mode="none"`: only a loopback interface;
- a non-root user, no capabilities, no privilege escalation;
- the environment is exactly the mapping the caller passes (`RunRequest.env`, an allow-list
  it built), on top of the image's own ENV — never the host's `os.environ`, never a token;
- a wall-clock limit: past it the container is stopped (SIGTERM through the init), then
  killed; it is always removed;
- memory, pids and log limits (`RunRequest.limits`, config/limits.py); a run over one, or
  whose output folder is over `output_mib`, is an error naming the limit (the partial
  result it wrote is kept, never judged).
GPUs are requested with a `--gpus`-style spec (`all`, a count, `device=0,1`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..paths import is_inside
from ..run.relay import bounded_lines, neutralise
from .hidden_git import cover_mounts
from .image_store import DEFAULT_KEEP_IMAGES
from .images import DEFAULT_BASE_IMAGE, BuiltImage, ImageSpec, ensure_image
from .limits import PidsWatch, limit_breach, limit_kwargs, output_over
from .outcome import LogSink, RunCompleted, RunRequest

WORKSPACE = "/workspace"
OUT = "/out"
CONFIG_MOUNT = "/etc/compilegate/compilegate.yml"
# The image's user (Dockerfile: useradd --uid 1000); used when the host user is root.
IMAGE_UID = 1000
STOP_GRACE_S = 10
LOG_TAIL_LINES = 40

_DEVICE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


def parse_gpus(spec: str | None) -> list[Any]:
    """`docker run --gpus` syntax → the engine's device requests: `all`, a positive count,
    or `device=ID[,ID...]` (indices or GPU UUIDs; quotes around it allowed). None or an
    empty string: no GPU. Anything else is a UsageError."""
    from docker.types import DeviceRequest

    if spec is None or not spec.strip():
        return []
    text = spec.strip().strip("'\"")
    if text == "all":
        return [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    if text.isdigit():
        if int(text) < 1:
            raise UsageError(f"--gpus {spec!r}: a GPU count must be at least 1")
        return [DeviceRequest(count=int(text), capabilities=[["gpu"]])]
    if text.startswith("device="):
        ids = [part.strip() for part in text[len("device=") :].split(",")]
        if ids and all(_DEVICE_ID.match(i) for i in ids):
            return [DeviceRequest(device_ids=ids, capabilities=[["gpu"]])]
    raise UsageError(f"--gpus {spec!r}: expected all, a count (2) or device=ID[,ID...]")


def container_user(out_dir: Path, *, uid: int | None = None, gid: int | None = None) -> str:
    """The non-root `uid:gid` the container runs as, with `out_dir` writable by it: the host
    user's own ids (the results are then the host user's files), or, when the host user is
    root, the image's user — `out_dir` is then handed to it."""
    uid = os.getuid() if uid is None else uid
    gid = os.getgid() if gid is None else gid
    if uid != 0:
        return f"{uid}:{gid}"
    os.chown(out_dir, IMAGE_UID, IMAGE_UID)
    return f"{IMAGE_UID}:{IMAGE_UID}"


def container_command(request: RunRequest) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The `compilegate run` arguments (the image's ENTRYPOINT is `compilegate`) and the
    bind mounts, as container paths."""
    repo = request.repo.resolve()
    config = request.config.resolve()
    volumes = {
        str(repo): {"bind": WORKSPACE, "mode": "ro"},
        str(request.out_dir.resolve()): {"bind": OUT, "mode": "rw"},
    }
    if is_inside(config, repo):
        config_in_container = f"{WORKSPACE}/{config.relative_to(repo).as_posix()}"
    else:
        volumes[str(config)] = {"bind": CONFIG_MOUNT, "mode": "ro"}
        config_in_container = CONFIG_MOUNT
    command = ["run", "--config", config_in_container, "--repo", WORKSPACE]
    command += ["--out", f"{OUT}/{request.result_path.name}"]
    for step in request.steps:
        command += ["--step", step]
    command += list(request.extra_args)
    return command, volumes


def container_run_kwargs(
    image: str,
    request: RunRequest,
    *,
    user: str,
    device_requests: Iterable[Any] = (),
    name: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `client.containers.run(detach=True, ...)`: everything the
    container may see and do is decided here."""
    command, volumes = container_command(request)
    kwargs: dict[str, Any] = {
        "image": image,
        "command": command,
        "volumes": volumes,
        # Every .git of the repository covered by an empty one (hidden_git.py).
        "mounts": cover_mounts(request.repo.resolve(), WORKSPACE),
        "working_dir": WORKSPACE,
        "environment": dict(request.env),
        "network_mode": "none",
        "user": user,
        # An init (docker-init, from tini) as PID 1: forwards the stop signal to compilegate
        # (a PID 1 without a handler ignores SIGTERM) and reaps its child processes.
        "init": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "detach": True,
        "auto_remove": False,  # removed by us, after its exit code is read
        "labels": {"compilegate.role": "run"},
        **limit_kwargs(request.limits),
    }
    requests = list(device_requests)
    if requests:
        kwargs["device_requests"] = requests
    if name:
        kwargs["name"] = name
    return kwargs


class DockerBackend:
    """Builds (or reuses) one image per torch version and runs compilegate in it."""

    name = "docker"

    def __init__(
        self,
        client: Any,
        *,
        source_root: Path,
        base_image: str = DEFAULT_BASE_IMAGE,
        index_url: str | None = None,
        gpus: str | None = None,
        wheel_dirs: Iterable[Path] | None = None,
        wheels_only: bool = False,
        requirements: bytes | None = None,
        requirements_source_builds: bool = False,
        build_network: str | None = None,
        rebuild: bool = False,
        keep_superseded: bool = False,
        keep_images: int = DEFAULT_KEEP_IMAGES,
        log: LogSink = print,
        host_environ: Mapping[str, str] | None = None,
    ) -> None:
        """`host_environ` is read only for the host's pip trust and wheel folders of the
        image build (ImageSpec.from_host); nothing of it reaches a container. `requirements`:
        the file's bytes, read from the checkout (containers/requirements.py);
        `build_network`: the builds' network (None: the engine's default, images.py);
        `keep_images`: the most images of one torch version kept (image_store.py)."""
        self.client = client
        self.source_root = Path(source_root)
        self.base_image = base_image
        self.index_url = index_url
        self.device_requests = parse_gpus(gpus)
        self.wheel_dirs = None if wheel_dirs is None else tuple(wheel_dirs)
        self.wheels_only = wheels_only
        self.requirements = requirements
        self.requirements_source_builds = requirements_source_builds
        self.build_network = build_network
        self.rebuild = rebuild
        self.keep_superseded = keep_superseded
        self.keep_images = keep_images
        self.log = log
        self.host_environ = host_environ
        self.images: dict[str, BuiltImage] = {}

    def image_spec(self, torch_version: str) -> ImageSpec:
        return ImageSpec.from_host(
            torch_version,
            source_root=self.source_root,
            base_image=self.base_image,
            index_url=self.index_url,
            wheel_dirs=self.wheel_dirs,
            wheels_only=self.wheels_only,
            environ=self.host_environ,
            requirements=self.requirements,
            requirements_source_builds=self.requirements_source_builds,
        )

    def prepare(self, torch_version: str) -> str:
        built = ensure_image(
            self.client,
            self.image_spec(torch_version),
            rebuild=self.rebuild,
            log=self.log,
            build_network=self.build_network,
            keep_superseded=self.keep_superseded,
            keep_images=self.keep_images,
        )
        self.images[torch_version] = built
        return built.tag

    def run(self, torch_version: str, request: RunRequest) -> RunCompleted:
        image = self.images[torch_version].tag if torch_version in self.images else None
        if image is None:
            image = self.prepare(torch_version)
        return run_container(
            self.client,
            image,
            request,
            device_requests=self.device_requests,
            prefix=f"[torch {torch_version}]",
            log=self.log,
        )


def run_container(
    client: Any,
    image: str,
    request: RunRequest,
    *,
    device_requests: Iterable[Any] = (),
    prefix: str = "",
    log: LogSink = print,
    user: str | None = None,
) -> RunCompleted:
    """Run one container to completion or its wall-clock limit, streaming its output with
    `prefix`; the container is removed in every case."""
    request.out_dir.mkdir(parents=True, exist_ok=True)
    kwargs = container_run_kwargs(
        image,
        request,
        user=user or container_user(request.out_dir),
        device_requests=device_requests,
    )
    tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
    started = time.perf_counter()
    try:
        container = client.containers.run(**kwargs)
    except Exception as exc:  # image gone, bad device request, engine error
        return RunCompleted(None, time.perf_counter() - started, f"container did not start: {exc}")
    streamer = threading.Thread(
        target=_stream_logs, args=(container, prefix, log, tail), daemon=True
    )
    streamer.start()
    watch = PidsWatch(container).start()
    try:
        exit_code: int | None
        error: str | None = None
        try:
            status = container.wait(timeout=request.timeout_s)
            exit_code = int(status.get("StatusCode", -1))
        except Exception:  # the engine's wait timed out: the wall-clock limit
            exit_code = None
            error = f"timed out after {request.timeout_s:.0f} s: container stopped"
            _stop(container)
        streamer.join(timeout=STOP_GRACE_S)
        wall_s = time.perf_counter() - started
        breach = limit_breach(container, request.limits, watch.stop())
        if error is None and breach is not None:  # an error, never judged: what was
            return RunCompleted(None, wall_s, breach, tuple(tail))  # measured is kept
        if error is None:
            error = output_over(request.out_dir, request.limits)
            if error is not None:
                return RunCompleted(None, wall_s, error, tuple(tail))
        if error is None and exit_code not in (0, 1):
            last = next((line for line in reversed(tail) if line.strip()), "")
            error = f"compilegate exited {exit_code}" + (f": {last.strip()}" if last else "")
        return RunCompleted(exit_code, wall_s, error, tuple(tail))
    finally:
        watch.stop()
        try:
            container.remove(force=True)
        except Exception as exc:  # already gone; say so, never mask the outcome
            log(f"{prefix} could not remove container: {exc}")


def _stream_logs(container: Any, prefix: str, log: LogSink, tail: deque[str]) -> None:
    for raw in bounded_lines(_log_chunks(container)):  # a line of any length is cut
        line = neutralise(raw)
        tail.append(line)
        log(f"{prefix} {line}" if prefix else line)


def _log_chunks(container: Any) -> Iterator[bytes]:
    try:
        yield from container.logs(stream=True, follow=True)
    except Exception:  # the container went away under us (stopped at the limit)
        return


def _stop(container: Any) -> None:
    try:
        container.stop(timeout=STOP_GRACE_S)
    except Exception:
        pass
    try:
        container.kill()
    except Exception:  # already stopped: the usual case
        pass
