"""On the real engine: a build removes the images an earlier compilegate built, keeps the ones
a container uses and the ones someone tagged by hand (containers/images.py, remove_superseded)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from compilegate.containers.images import ImageSpec, remove_superseded, sources_digest
from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker


def _tiny_image(client: Any, base_image: str, tag: str, sources: str) -> None:
    dockerfile = (
        f"FROM {base_image}\n"
        f"LABEL compilegate.inputs-sha256={'0' * 64} compilegate.sources-sha256={sources}\n"
    )
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)


def test_only_images_of_other_sources_that_nothing_uses_are_removed(
    docker_client: Any, base_image: str
) -> None:
    old = "compilegate-torch:0.0.1-aaaaaaaaaaaa"
    running = "compilegate-torch:0.0.2-bbbbbbbbbbbb"
    current = "compilegate-torch:0.0.3-cccccccccccc"
    by_hand = "compilegate-torch:0.0.4"
    # This tree's own sources: the suite's other images (local_torch_image) must stay.
    now = sources_digest(ImageSpec("0.0.3", REPO_ROOT))
    _tiny_image(docker_client, base_image, old, "old")
    _tiny_image(docker_client, base_image, running, "older")
    _tiny_image(docker_client, base_image, current, now)
    _tiny_image(docker_client, base_image, by_hand, "old")
    container = docker_client.containers.run(
        running, ["sleep", "60"], detach=True, network_mode="none"
    )
    lines: list[str] = []
    try:
        remove_superseded(docker_client, now, log=lines.append)
        tags = {tag for image in docker_client.images.list() for tag in image.tags}
    finally:
        container.remove(force=True)
        for tag in (running, current, by_hand, old):
            try:
                docker_client.images.remove(tag)
            except Exception:
                pass
    assert old not in tags
    assert {running, current, by_hand} <= tags
    assert any(line.startswith(f"removed {old}") for line in lines), lines
    assert any(line.startswith(f"kept {running}") for line in lines), lines
