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

import pytest
from docker_helpers import LOCAL_TORCH, REPO_ROOT


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "docker: needs a running Docker engine and the local base image"
    )


def _unavailable(reason: str) -> None:
    if os.environ.get("COMPILEGATE_REQUIRE_DOCKER") == "1":
        pytest.fail(f"COMPILEGATE_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(f"DOCKER NOT TESTED: {reason} (run scripts/docker-setup.sh)")


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
