"""Run compilegate once per PyTorch version: in one Docker image per version, or in one
cached virtual environment per version (no Docker).

    images          an image's inputs, tag and labels; build or reuse it (`ensure_image`)
    docker_backend  run `compilegate run` in a container: repo read-only, no network,
                    non-root, only the allow-listed environment, GPUs on request
    venv_backend    the same with a cached venv per version and `--python`
    matrix          per version: prepare, run, collect result.json (`run_matrix`)
    outcome         the request, the per-version outcome, the backend protocol, the error

Needs the `docker` package (the Docker SDK) only for the Docker backend; the client is
passed in, so nothing here talks to an engine on its own.
"""

from __future__ import annotations

from .docker_backend import DockerBackend, parse_gpus
from .images import BuiltImage, ImageSpec, ensure_image
from .matrix import run_matrix
from .outcome import Backend, EnvironmentBuildError, RunCompleted, RunRequest, VersionOutcome
from .venv_backend import VenvBackend

__all__ = [
    "Backend",
    "BuiltImage",
    "DockerBackend",
    "EnvironmentBuildError",
    "ImageSpec",
    "RunCompleted",
    "RunRequest",
    "VenvBackend",
    "VersionOutcome",
    "ensure_image",
    "parse_gpus",
    "run_matrix",
]
