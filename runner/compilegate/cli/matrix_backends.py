"""`matrix --backend docker|venv|image`: the backend for each version, and, in paired mode,
each version's launcher. Docker is asked where we are first (containers/shape.py): with no
engine, or one that cannot hand a container the GPU a step needs, the one line of
report/shape_words.py says what to use, before any build and never as a traceback."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..containers.outcome import LogSink
from ..errors import UsageError
from ..run.child_env import child_environment, container_environment

if TYPE_CHECKING:
    from ..containers.shape import BackendFit
    from ..run.launcher import Launcher

BACKENDS = ("docker", "venv", "image")


def matrix_backend(
    args: argparse.Namespace, config: Config | None, opt_in: list[str], log: LogSink
) -> tuple[Any, dict[str, str]]:
    """The backend, and the complete environment each version's run gets (never a token)."""
    if args.backend == "venv":
        from ..containers.venv_backend import VenvBackend

        venv_backend = VenvBackend(
            rebuild=args.rebuild,
            requirements=args.requirements_bytes,
            requirements_source_builds=args.requirements_allow_source_builds,
            log=log,
        )
        return venv_backend, child_environment(os.environ, opt_in)
    if args.backend == "image":
        return image_backend(args, log), child_environment(os.environ, opt_in)
    return docker_backend(args, config, log), container_environment(os.environ, opt_in)


def image_backend(args: argparse.Namespace, log: LogSink) -> Any:
    """The image's own torch (containers/image_backend.py); --requirements were installed
    into the image when it was built, so here they are refused rather than ignored."""
    from ..containers.image_backend import ImageBackend, find_image_python

    if args.requirements is not None:
        raise UsageError(
            "--requirements with --backend image: the image holds what it was built with; "
            "build it with them (docker build ... with requirements/requirements.txt)"
        )
    found = find_image_python()
    if found is None:
        raise UsageError(_shape_line("image", config=None, gpus=None))
    return ImageBackend(python=found[0], torch_version=found[1], log=log)


def docker_backend(args: argparse.Namespace, config: Config | None, log: LogSink) -> Any:
    """The Docker backend, once the shape says an engine is here that can run the steps."""
    from ..containers.docker_backend import DockerBackend
    from ..containers.images import DEFAULT_BASE_IMAGE

    check_docker_shape(config, args.gpus)
    try:
        import docker

        client = docker.from_env(timeout=600)
        client.ping()
    except Exception:  # went away since the shape was asked
        raise UsageError(_shape_line("docker", config=config, gpus=args.gpus)) from None
    source_root = Path(__file__).resolve().parents[3]
    if not (source_root / "pyproject.toml").is_file() or not (source_root / "Dockerfile").is_file():
        raise UsageError(
            "--backend docker builds its images from compilegate's source tree, which this "
            "installation lacks: install compilegate from a checkout (the action does)"
        )
    return DockerBackend(
        client,
        source_root=source_root,
        base_image=args.base_image or DEFAULT_BASE_IMAGE,
        index_url=args.index_url,
        gpus=args.gpus,
        requirements=args.requirements_bytes,
        requirements_source_builds=args.requirements_allow_source_builds,
        build_network=None if args.build_network == "default" else args.build_network,
        rebuild=args.rebuild,
        keep_superseded=args.keep_old_images,
        keep_images=args.keep_images,
        log=log,
    )


def check_docker_shape(config: Config | None, gpus: str | None) -> None:
    """UsageError (exit 2) with the shape's one line where docker does not fit here."""
    fit = backend_fit("docker", config, gpus)
    if not fit.fits:
        from ..report.shape_words import shape_line

        raise UsageError(shape_line(fit).removeprefix("compilegate: "))


def backend_fit(backend: str, config: Config | None, gpus: str | None) -> BackendFit:
    """Where we are (containers/shape.py), and whether `backend` fits there for these
    steps and GPUs. The engine is asked to start a GPU container only when docker is asked
    for with a GPU wanted and the engine registers none."""
    from ..containers.shape import detect_shape, fit_backend

    asked = gpus_requested(gpus)
    cuda = [] if config is None else [s.name for s in config.steps if s.device == "cuda"]
    facts = detect_shape(probe_gpu=backend == "docker" and (asked or bool(cuda)))
    return fit_backend(facts, backend, gpus_requested=asked, cuda_steps=cuda)


def gpus_requested(gpus: str | None) -> bool:
    """Whether a `--gpus` spec asks for any GPU (empty, or only quotes: none)."""
    return bool(gpus and gpus.strip().strip("'\""))


def _shape_line(backend: str, *, config: Config | None, gpus: str | None) -> str:
    from ..report.shape_words import shape_line

    return shape_line(backend_fit(backend, config, gpus)).removeprefix("compilegate: ")


def paired_launchers(
    args: argparse.Namespace, config: Config, versions: list[str], log: LogSink
) -> list[tuple[str, Launcher]]:
    """Each version's launcher, its environment built first: a fresh container of its image
    per child (docker), its venv's interpreter (venv), or the image's own (image). A version
    that cannot be built stops the run before anything is measured: a paired run needs
    every side."""
    import sys

    from ..containers.outcome import EnvironmentBuildError
    from ..run.launcher import ChildLauncher

    backend, _ = matrix_backend(args, config, [], log)
    launchers: list[tuple[str, Launcher]] = []
    for version in versions:
        try:
            prepared = backend.prepare(version)
        except EnvironmentBuildError as exc:
            raise UsageError(f"torch {version}: {exc}") from None
        if args.backend == "venv":
            launcher: Launcher = ChildLauncher(python=str(backend.python(version)))
        elif args.backend == "image":
            from ..report.shape_words import child_user_line
            from ..run.child_user import decide_child_user

            user = decide_child_user()
            sys.stderr.write(child_user_line(user) + "\n")
            launcher = ChildLauncher(python=backend.python, child_user=user)
        else:
            from ..containers.child_launcher import ContainerLauncher

            launcher = ContainerLauncher(
                backend.client, prepared, device_requests=tuple(backend.device_requests)
            )
        launchers.append((version, launcher))
    return launchers
