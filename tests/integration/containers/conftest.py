"""Fixtures for the tests that drive the real Docker engine (marker `docker`).

Without a reachable engine these tests are skipped with a loud reason; with
COMPILEGATE_REQUIRE_DOCKER=1 (what CI sets after scripts/docker-setup.sh) they fail instead.
Images are built from the local base image `compilegate-base:bookworm`, which
scripts/docker-setup.sh makes without any registry.
"""

from __future__ import annotations

import os
import time
from typing import Any

import image_prebuild
import pytest
from docker_helpers import LOCAL_TORCH

from repo_helpers import REPO_ROOT


def _unavailable(reason: str) -> None:
    if os.environ.get("COMPILEGATE_REQUIRE_DOCKER") == "1":
        pytest.fail(f"COMPILEGATE_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(f"DOCKER NOT TESTED: {reason} (run scripts/docker-setup.sh)")


@pytest.fixture(autouse=True, scope="session")
def _images_built_ahead(request: pytest.FixtureRequest) -> None:
    """Before the first container test: the builds started ahead (tests/conftest.py) are
    done, so no test builds beside them and the fixtures below only find their images."""
    process, status_file = request.config.stash.get(image_prebuild.PREBUILD, (None, None))
    if status_file is not None:
        lines = image_prebuild.wait(process, status_file)
        if lines:
            print("\n" + "\n".join(lines))


@pytest.fixture(scope="session")
def docker_client() -> Any:
    try:
        import docker

        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # no SDK, no socket, daemon down
        _unavailable(f"the Docker engine is unreachable: {type(exc).__name__}: {exc}")
    return client


@pytest.fixture(scope="session")
def build_network(docker_client: Any) -> str | None:
    """The network image builds use here, passed explicitly: the engine's default (None), or
    `host` on an engine without a bridge (scripts/docker-setup.sh starts dockerd with
    --bridge=none: a build on its default network has only a loopback, and pip no index).
    Set for the CLI runs too, through the variable `compilegate matrix` reads."""
    network = os.environ.get("COMPILEGATE_BUILD_NETWORK")
    if not network:
        network = "default" if docker_client.networks.list(names=["bridge"]) else "host"
        os.environ["COMPILEGATE_BUILD_NETWORK"] = network
    return None if network == "default" else network


@pytest.fixture(scope="session")
def base_image(docker_client: Any, build_network: str | None) -> str:
    from compilegate.containers.images import LOCAL_BASE_IMAGE

    try:
        docker_client.images.get(LOCAL_BASE_IMAGE)
    except Exception:
        _unavailable(f"the local base image {LOCAL_BASE_IMAGE} is missing")
    return LOCAL_BASE_IMAGE


@pytest.fixture(scope="session")
def build_log() -> list[str]:
    return []


@pytest.fixture(scope="session")
def local_torch_image(
    docker_client: Any, base_image: str, build_log: list[str], build_network: str | None
) -> Any:
    """The image with the CPU torch wheel on this disk (built once, then reused)."""
    from compilegate.containers.images import ImageSpec, ensure_image

    spec = ImageSpec.from_host(LOCAL_TORCH, source_root=REPO_ROOT, base_image=base_image)
    if not spec.wheels:
        _unavailable(f"no local wheel of torch {LOCAL_TORCH} in the host's pip folders")
    started = time.perf_counter()
    built = ensure_image(docker_client, spec, log=build_log.append, build_network=build_network)
    print(
        f"\nimage {built.tag}: {'reused' if built.reused else 'built'} in "
        f"{time.perf_counter() - started:.1f} s, {built.size_bytes / 1e9:.2f} GB"
    )
    return built


# A CUDA build of torch (COMPILEGATE_DOCKER_SECOND_TORCH, CI's 2.14.1) takes about 17 GB of
# the engine's disk at its image build's peak: the wheels sent as the build context, copied
# into the build stage, installed there, and the environment copied into the final stage
# (measured in a clean-clone CI run here: 34.9 GB in use before, 51.4 GB at the peak, 40.4 GB
# once the build stage was removed). 20 GB leaves a margin.
SECOND_TORCH_BUILD_BYTES = 20 * 10**9


def _prune_dangling(client: Any) -> int:
    """Removes the untagged images the builds left (their build stages: an image is reused
    by its tag, so nothing reads them again); the bytes freed."""
    return int(client.images.prune(filters={"dangling": True}).get("SpaceReclaimed") or 0)


@pytest.fixture(autouse=True, scope="module")
def _build_stages_pruned() -> Any:
    """After each module of container tests, the build stages its images left are removed, so
    the suite's disk peak is one build's, not the sum of every build's."""
    yield
    try:
        import docker

        client = docker.from_env(timeout=120)
        client.ping()
    except Exception:  # no engine: the tests skipped or failed already
        return
    freed = _prune_dangling(client)
    if freed:
        print(f"\nremoved the build stages left behind: {freed / 1e9:.1f} GB")


@pytest.fixture(scope="session")
def room_for_second_torch(docker_client: Any) -> None:
    """Fails clearly, before a build that would stop on 'no space left on device', when the
    engine's disk cannot hold the second torch's image; reuses an image already built."""
    import shutil

    second = os.environ.get("COMPILEGATE_DOCKER_SECOND_TORCH")
    if not second or any(
        tag.startswith(f"compilegate-torch:{second}-")
        for image in docker_client.images.list()
        for tag in image.tags
    ):
        return
    root = docker_client.info().get("DockerRootDir") or "/var/lib/docker"
    if shutil.disk_usage(root).free < SECOND_TORCH_BUILD_BYTES:
        _prune_dangling(docker_client)
    free = shutil.disk_usage(root).free
    if free < SECOND_TORCH_BUILD_BYTES:
        pytest.fail(
            f"the image of torch {second} needs about {SECOND_TORCH_BUILD_BYTES / 1e9:.0f} GB "
            f"free on {root} while it builds; {free / 1e9:.1f} GB are",
            pytrace=False,
        )
