"""The container tests' images, built ahead while the rest of the suite runs.

Building the images is most of what the container tests wait for (measured in a clean-clone
CI run, 2026-12-07: the CPU torch image 2-4 min, the CUDA image of the second torch several
more, most of it pip reading wheels and the engine writing layers, not CPU). So a whole run
(`make test`) starts this module as a process of its own when collection is done
(tests/conftest.py), moves the container tests to the end of the run, and the container
fixtures wait for it before they build, which then only finds the images. Each image is
made by `ensure_image` with the very spec the fixtures and `compilegate matrix` compute, so
an image built here is the one they would have built; a build that fails here is built again,
and fails with its own log, where the test needs it. A run of a few container tests, or one
without an engine, builds nothing ahead.

As a script: `python image_prebuild.py STATUS_FILE VERSION...` builds each version's image
and writes one JSON line per image to STATUS_FILE (tag, built or reused, seconds, or the
error), for the fixtures' log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).resolve()
# Set by tests/conftest.py when it starts the builds: the process and the file it reports to,
# for the container tests' fixture to wait on.
PREBUILD = pytest.StashKey[tuple[Any, Path]]()


def versions_to_build() -> list[str]:
    """The local torch (every container test's image) and CI's second torch, if asked for."""
    from docker_helpers import LOCAL_TORCH

    second = os.environ.get("COMPILEGATE_DOCKER_SECOND_TORCH")
    return [LOCAL_TORCH, *([second] if second and second != LOCAL_TORCH else [])]


def build_network(client: Any) -> str | None:
    """As the `build_network` fixture decides: the engine's default, or `host` on an engine
    without a bridge (scripts/docker-setup.sh)."""
    network = os.environ.get("COMPILEGATE_BUILD_NETWORK")
    if not network:
        network = "default" if client.networks.list(names=["bridge"]) else "host"
    return None if network == "default" else network


def start(status_file: Path) -> subprocess.Popen[bytes] | None:
    """Starts the builds in a process of their own when an engine answers and the local base
    image is there; None otherwise (the fixtures then skip or fail as they always did)."""
    try:
        import docker

        from compilegate.containers.images import LOCAL_BASE_IMAGE

        client = docker.from_env(timeout=30)
        client.ping()
        client.images.get(LOCAL_BASE_IMAGE)
    except Exception:
        return None
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(REPO_ROOT / "runner"), str(SCRIPT.parent), str(REPO_ROOT / "tests")]
        ),
    }
    with open(status_file.with_suffix(".log"), "wb") as log:
        return subprocess.Popen(
            [sys.executable, str(SCRIPT), str(status_file), *versions_to_build()],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )


def wait(process: subprocess.Popen[bytes] | None, status_file: Path) -> list[str]:
    """Waits for the builds started ahead, if any; what they did, a line per image."""
    if process is None:
        return []
    started = time.perf_counter()
    process.wait()
    waited_s = time.perf_counter() - started
    lines = [f"images built ahead (waited {waited_s:.0f} s for them):"]
    if status_file.is_file():
        for line in status_file.read_text().splitlines():
            entry = json.loads(line)
            lines.append("  " + ", ".join(f"{key} {value}" for key, value in entry.items()))
    return lines


def main(status_file: Path, versions: list[str]) -> int:
    import docker

    from compilegate.containers.images import LOCAL_BASE_IMAGE, ImageSpec, ensure_image

    client = docker.from_env(timeout=1800)
    network = build_network(client)
    for version in versions:
        started = time.perf_counter()
        entry: dict[str, object] = {"torch": version}
        try:
            spec = ImageSpec.from_host(version, source_root=REPO_ROOT, base_image=LOCAL_BASE_IMAGE)
            built = ensure_image(client, spec, build_network=network, log=print)
            entry.update(tag=built.tag, reused=built.reused)
        except Exception as exc:  # the fixture builds it again and fails with the log
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        entry["seconds"] = round(time.perf_counter() - started)
        with status_file.open("a") as status:
            status.write(json.dumps(entry) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))
