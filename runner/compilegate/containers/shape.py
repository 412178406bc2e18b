"""Where am I: the shape compilegate runs in, found before the first Docker call.

Three shapes a job can be in (docs/security.md, "The job-container shape"):
- a Docker engine, with or without a way to hand a container the GPU (the NVIDIA runtime
  or the NVIDIA hook's device driver; ARC's `dind` sidecar has neither, issue 52);
- inside a job container (`jobs.<id>.container`, or a Kubernetes job pod through the runner's
  container hooks: ARC's kubernetes modes give the job no engine at all); the runner mounts
  its work folder there at /__w, and GITHUB_WORKSPACE says so;
- neither: a bare host without an engine.

`detect_shape` gathers the facts through seams (the environment, a file test, an engine
probe, a GPU probe), so the decision (`fit_backend`) is tested without an engine; the words
are report/shape_words.py's. Only the standard library here; the real probes import the
docker SDK lazily.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
# The runner mounts its work folder at /__w in a job container (GitHub's container jobs and
# actions/runner-container-hooks' docker and k8s hooks alike); on a host it is _work.
JOB_CONTAINER_WORK = "/__w/"
# `docker run --gpus` fails at start with this when the engine has no device driver for it
# (moby daemon/devices.go); the GPU probe looks for it.
NO_GPU_DRIVER = "could not select device driver"
PROBE_TIMEOUT_S = 10


class Shape(Enum):
    """Where compilegate finds itself."""

    DOCKER_GPU = "docker-gpu"  # an engine that can hand a container the GPU
    DOCKER_NO_GPU = "docker-no-gpu"  # an engine without the NVIDIA runtime (dind)
    JOB_CONTAINER = "job-container"  # inside a job container, no engine
    NEITHER = "neither"  # a host without an engine


@dataclass(frozen=True)
class EngineFacts:
    """What a reachable engine says of itself (`docker info`), and the GPU probe's answer:
    True the engine handed a container a GPU request, False it could not, None not probed."""

    address: str
    server_version: str
    runtimes: tuple[str, ...]
    cdi_gpu_devices: tuple[str, ...]
    gpu_probe: bool | None = None

    @classmethod
    def from_info(
        cls, address: str, info: Mapping[str, Any], gpu_probe: bool | None = None
    ) -> EngineFacts:
        runtimes = info.get("Runtimes") or {}
        devices = info.get("DiscoveredDevices") or []  # Docker 28+: CDI devices it found
        return cls(
            address=address,
            server_version=str(info.get("ServerVersion") or "unknown"),
            runtimes=tuple(sorted(str(name) for name in runtimes)),
            cdi_gpu_devices=tuple(
                str(d.get("ID")) for d in devices
                if isinstance(d, Mapping) and str(d.get("ID", "")).startswith("nvidia.com/gpu")
            ),
            gpu_probe=gpu_probe,
        )  # fmt: skip

    @property
    def registered_gpu(self) -> bool:
        """The engine names a way to the GPU: the `nvidia` runtime or CDI NVIDIA devices."""
        return "nvidia" in self.runtimes or bool(self.cdi_gpu_devices)

    @property
    def hands_gpu(self) -> bool:
        """Whether a container of this engine can be given the GPU: the probe decides when it
        ran (the NVIDIA hook alone, in the engine's PATH, registers `--gpus` without any
        runtime: docker info cannot show it), else what the engine registered."""
        return self.gpu_probe if self.gpu_probe is not None else self.registered_gpu


@dataclass(frozen=True)
class ShapeFacts:
    """Everything the shape is decided from."""

    engine: EngineFacts | None  # None: no engine answered
    engine_error: str | None  # why none answered (one line), when it did not
    docker_host: str
    job_container: bool
    kubernetes: bool
    gpu_devices: tuple[str, ...]  # /dev/nvidia<N> visible here
    torch_version: str | None  # the torch this interpreter imports (the image's), or None

    @property
    def shape(self) -> Shape:
        if self.engine is not None:
            return Shape.DOCKER_GPU if self.engine.hands_gpu else Shape.DOCKER_NO_GPU
        return Shape.JOB_CONTAINER if self.job_container else Shape.NEITHER


@dataclass(frozen=True)
class BackendFit:
    """Whether the backend asked for fits the shape, and which one to use instead.
    `gpu_steps`: the steps that need a GPU the engine cannot hand (names from the config)."""

    facts: ShapeFacts
    backend: str
    fits: bool
    use: str | None  # the backend to use instead; None: it fits, or none here does
    gpus_requested: bool = False
    gpu_steps: tuple[str, ...] = ()


def fit_backend(
    facts: ShapeFacts, backend: str, *, gpus_requested: bool, cuda_steps: Iterable[str]
) -> BackendFit:
    """Does `backend` (docker, venv, image, host) work where we are?

    docker needs an engine; with GPUs requested, or a step declaring `device: cuda`, an
    engine that can hand a container the GPU — otherwise the step would fail at the
    container's start or, with no GPU asked for, measure on the CPU. The others need no
    engine; image measures with this interpreter's torch, so it needs one."""
    cuda = tuple(cuda_steps)
    shape = facts.shape
    if backend == "docker":
        if shape is Shape.DOCKER_GPU:
            return BackendFit(facts, backend, True, None, gpus_requested, ())
        if shape is Shape.DOCKER_NO_GPU:
            fits = not gpus_requested and not cuda
            use = None if fits else _instead(facts)
            return BackendFit(facts, backend, fits, use, gpus_requested, cuda)
        return BackendFit(facts, backend, False, _instead(facts), gpus_requested, cuda)
    if backend == "image" and facts.torch_version is None:
        return BackendFit(facts, backend, False, None, gpus_requested, cuda)
    return BackendFit(facts, backend, True, None, gpus_requested, cuda)


def _instead(facts: ShapeFacts) -> str | None:
    """Where docker does not fit: the image backend where this interpreter has torch (the
    image as a job container, or a host's own torch); nothing here otherwise."""
    return "image" if facts.torch_version is not None else None


def detect_shape(
    environ: Mapping[str, str] | None = None,
    *,
    engine_info: Callable[[], Mapping[str, Any]] | None = None,
    gpu_probe: Callable[[], bool | None] | None = None,
    list_dev: Callable[[], Iterable[str]] | None = None,
    torch_version: Callable[[], str | None] | None = None,
    probe_gpu: bool = False,
) -> ShapeFacts:
    """The facts, each through its seam (defaults: the real ones). The engine is asked once
    (`docker info`, a short timeout); with `probe_gpu` and an engine that registers no GPU,
    `gpu_probe` asks it to start a container with a GPU request (nothing runs in it)."""
    env = dict(os.environ if environ is None else environ)
    address = env.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST
    engine: EngineFacts | None = None
    error: str | None = None
    try:
        info = (engine_info or _engine_info)()
    except Exception as exc:  # no SDK, no socket, refused, timed out: all mean "no engine"
        error = _one_line(exc)
    else:
        engine = EngineFacts.from_info(address, info)
        if probe_gpu and not engine.registered_gpu:
            engine = EngineFacts.from_info(address, info, (gpu_probe or _gpu_probe)())
    work = env.get("GITHUB_WORKSPACE", "") or env.get("RUNNER_TEMP", "")
    return ShapeFacts(
        engine=engine,
        engine_error=error,
        docker_host=address,
        job_container=work.startswith(JOB_CONTAINER_WORK),
        kubernetes=bool(env.get("KUBERNETES_SERVICE_HOST")),
        gpu_devices=tuple(sorted((list_dev or _nvidia_devices)())),
        torch_version=(torch_version or installed_torch_version)(),
    )


def installed_torch_version() -> str | None:
    """The torch this interpreter would import (its distribution's metadata: no import)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def _engine_info() -> Mapping[str, Any]:
    import docker

    client = docker.from_env(timeout=PROBE_TIMEOUT_S)
    try:
        return dict(client.info())
    finally:
        client.close()


def _gpu_probe() -> bool | None:
    """Ask the engine to start a container with `--gpus all` from any image it holds: a
    start refused with NO_GPU_DRIVER means it cannot hand one (the device driver is chosen
    before anything in the container runs, so the image's content does not matter). None:
    no image to probe with, or the engine answered something else."""
    import docker
    from docker.types import DeviceRequest

    client = docker.from_env(timeout=PROBE_TIMEOUT_S)
    try:
        images = [i for i in client.images.list() if i.tags]
        if not images:
            return None
        container = client.containers.create(
            images[0].tags[0],
            entrypoint=["true"],
            network_mode="none",
            device_requests=[DeviceRequest(count=-1, capabilities=[["gpu"]])],
            labels={"compilegate.role": "gpu-probe"},
        )
        try:
            container.start()
        except Exception as exc:
            return _probe_answer(str(exc))
        finally:
            container.remove(force=True)
        return True
    except Exception:
        return None
    finally:
        client.close()


def _probe_answer(error: str) -> bool | None:
    """What a refused start says of the GPU: no device driver, or the NVIDIA hook failing
    (no GPU or driver under the engine), is False; the image's own entrypoint missing means
    the GPU request got past the engine (True); anything else is not known (None)."""
    if NO_GPU_DRIVER in error or "nvidia-container-cli" in error:
        return False
    if "executable file not found" in error:
        return True
    return None


def _nvidia_devices() -> list[str]:
    try:
        names = os.listdir("/dev")
    except OSError:
        return []
    return [n for n in names if n.startswith("nvidia") and n[len("nvidia") :].isdigit()]


def _one_line(exc: BaseException) -> str:
    """Why no engine answered, in a few words: the socket's own error where the SDK's text
    names one, else the exception's class and the start of its text."""
    text = " ".join(str(exc).split())
    for marker, words in _ENGINE_ERRORS:
        if marker in text:
            return words
    if isinstance(exc, ImportError):
        return "the docker package is not installed"
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


_ENGINE_ERRORS = (
    ("FileNotFoundError", "no such socket"),
    ("No such file or directory", "no such socket"),
    ("ConnectionRefusedError", "connection refused"),
    ("Connection refused", "connection refused"),
    ("PermissionError", "permission denied"),
    ("Permission denied", "permission denied"),
    ("timed out", "timed out"),
)
