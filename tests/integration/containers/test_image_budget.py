"""Issue 51, finding 2, on the real engine: a runner following a team's pushes keeps a bounded
number of images (containers/image_store.py).

Pushes that change only a requirements comment (and blank lines, and the order of the
requirement lines) name the same image: one build, then reuse. Pushes that change a real
requirement keep at most `keep_images` images of one torch version, the least recently used
going first (reuse renews an image), never one a container was created from, never an image
that is not compilegate's; no build leaves its labelled build stage behind.

The images are tiny: ensure_image builds from a source tree of its own (ImageSpec's
source_root) whose Dockerfile has the real Dockerfile's build-stage lines and no torch, a few
seconds a build. Other compilegates' images on the engine are left alone (keep_superseded).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli

from compilegate.containers.image_store import (
    IMAGE_REPOSITORY,
    LABEL_BUILD_STAGE,
    LABEL_SOURCES_SHA256,
)
from compilegate.containers.images import BuiltImage, ImageSpec, ensure_image, sources_digest
from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker


def build_stage_lines() -> str:
    """The real Dockerfile's build-stage label lines (ARG and LABEL of the build stage)."""
    lines = (REPO_ROOT / "Dockerfile").read_text().splitlines()
    start = lines.index("FROM system AS build")
    stage = lines[
        start + 1 : next(i for i in range(start + 1, len(lines)) if lines[i].startswith("FROM"))
    ]
    found = [
        line for line in stage if LABEL_BUILD_STAGE in line or "COMPILEGATE_BUILD_STAGE" in line
    ]
    assert any(line.startswith("LABEL") for line in found), "the build stage carries no label"
    return "\n".join(line for line in found if line.startswith(("ARG", "LABEL"))) + "\n"


@pytest.fixture()
def tiny_sources(tmp_path: Path, docker_client: Any) -> Iterator[Path]:
    """A compilegate source tree whose image is the base with the requirements file in it,
    built through a labelled build stage of 8 MB; its images are removed afterwards."""
    root = tmp_path / "src"
    files = {
        "Dockerfile": (
            "ARG BASE_IMAGE\n"
            "FROM ${BASE_IMAGE} AS build\n"
            + build_stage_lines()
            + "COPY pyproject.toml requirement[s] /tmp/requirements/\n"
            "RUN cp /tmp/requirements/requirements.txt /requirements.txt \\\n"
            " && dd if=/dev/zero of=/stage.bin bs=1M count=8 status=none\n"
            "FROM ${BASE_IMAGE}\n"
            "COPY --from=build /requirements.txt /requirements.txt\n"
        ),
        "pyproject.toml": "[project]\nname = 'tiny'\n",
        "README.md": f"# {tmp_path.name}\n",  # sources of their own: no other test's images
        "runner/compilegate/__init__.py": "",
        "schemas/config.schema.json": "{}\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    yield root
    sources = sources_digest(ImageSpec("0", root))
    for image in docker_client.images.list(filters={"label": f"{LABEL_SOURCES_SHA256}={sources}"}):
        for container in docker_client.containers.list(all=True, filters={"ancestor": image.id}):
            container.remove(force=True)
        docker_client.images.remove(image.id, force=True)


def push(
    client: Any, root: Path, base_image: str, requirements: str, *, version: str, keep: int = 2
) -> BuiltImage:
    spec = ImageSpec(version, root, base_image=base_image, requirements=requirements.encode())
    return ensure_image(
        client, spec, log=lambda _line: None, build_network="none", keep_superseded=True,
        keep_images=keep,
    )  # fmt: skip


def ours(client: Any, root: Path) -> set[str]:
    sources = sources_digest(ImageSpec("0", root))
    found = client.images.list(
        name=IMAGE_REPOSITORY, filters={"label": f"{LABEL_SOURCES_SHA256}={sources}"}
    )
    return {tag for image in found for tag in image.tags}


def stages_left(client: Any) -> list[Any]:
    return client.images.list(filters={"dangling": True, "label": LABEL_BUILD_STAGE})


def test_ten_pushes_that_change_only_a_comment_build_one_image(
    docker_client: Any, base_image: str, tiny_sources: Path
) -> None:
    built = []
    for number in range(10):
        lines = ["six", "attrs>=22"] if number % 2 else ["attrs>=22", "", "six  "]
        text = f"# our dependencies, push {number}\n" + "\n".join(lines) + "\n" * (1 + number % 3)
        built.append(push(docker_client, tiny_sources, base_image, text, version="0.51.1"))
    assert [b.reused for b in built] == [False] + [True] * 9
    assert ours(docker_client, tiny_sources) == {built[0].tag}
    # The build stage went with the build: no untagged compilegate stage is left.
    assert not [i for i in stages_left(docker_client) if i.id in {b.image_id for b in built}]
    assert not docker_client.images.list(
        filters={"dangling": True, "label": f"{LABEL_BUILD_STAGE}={built[0].tag.rsplit('-', 1)[1]}"}
    )


def test_pushes_that_change_requirements_keep_the_most_recently_used_few(
    docker_client: Any, base_image: str, tiny_sources: Path, tmp_path: Path
) -> None:
    before = {image.id for image in stages_left(docker_client)}
    version = "0.51.2"
    first = push(docker_client, tiny_sources, base_image, "six==1.16.0\n", version=version)
    second = push(docker_client, tiny_sources, base_image, "six==1.15.0\n", version=version)
    again = push(docker_client, tiny_sources, base_image, "six==1.16.0  # back\n", version=version)
    assert not second.reused and again.reused and again.tag == first.tag  # used now
    third = push(docker_client, tiny_sources, base_image, "six==1.14.0\n", version=version)
    # Two at most: the least recently used (second) went, not the oldest built (first).
    assert ours(docker_client, tiny_sources) == {first.tag, third.tag}

    # An image a container was created from stays, and still counts: the next goes instead.
    holder = docker_client.containers.create(first.tag, ["true"], network_mode="none")
    try:
        fourth = push(docker_client, tiny_sources, base_image, "six==1.13.0\n", version=version)
        assert ours(docker_client, tiny_sources) == {first.tag, fourth.tag}
    finally:
        holder.remove(force=True)

    # Not compilegate's: a tag of our form on an image without our labels, never removed.
    foreign = f"{IMAGE_REPOSITORY}:{version}-{'f' * 12}"
    docker_client.images.get(base_image).tag(foreign)
    try:
        fifth = push(docker_client, tiny_sources, base_image, "six==1.12.0\n", version=version)
        tags = {
            tag for image in docker_client.images.list(name=IMAGE_REPOSITORY) for tag in image.tags
        }
        assert foreign in tags
        assert ours(docker_client, tiny_sources) == {fourth.tag, fifth.tag}
    finally:
        docker_client.images.remove(foreign)
    # Five builds, no build stage of theirs left.
    assert {image.id for image in stages_left(docker_client)} <= before

    # What an operator sees: `compilegate images list` names them, built by another
    # compilegate (these sources are the test's, not this tree's).
    listed = run_cli("images", "list", cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if line.startswith(IMAGE_REPOSITORY)]
    assert any(fifth.tag in row and "another compilegate" in row for row in rows), listed.stdout
    assert not any(foreign in row for row in rows)
    planned = run_cli("images", "prune", "--dry-run", cwd=tmp_path, timeout=120)
    assert planned.returncode == 0, planned.stderr
    assert f"would remove {fifth.tag} " in planned.stdout and foreign not in planned.stdout
    assert ours(docker_client, tiny_sources) == {fourth.tag, fifth.tag}  # a dry run
