"""What compilegate keeps in the Docker engine and what it removes: its images and their build
stages, within a disk budget.

Ours is an image tagged `compilegate-torch:<version>-<12 hex>` (images.image_tag) that carries
the inputs label; nothing else is ever removed (an image without our labels, a tag given by
hand). What goes, least needed first:

- superseded: our images of other compilegate sources (label `compilegate.sources-sha256`):
  this compilegate never reuses them, their tags name other sources. A build removes them
  first unless `keep_superseded` (the CLI's --keep-old-images).
- surplus: of our images of these sources and one torch version (built with other
  requirements, wheels, base image or index), at most `keep_images` stay, counting the one
  being built (DEFAULT_KEEP_IMAGES: the default branch's and one pull request's; the CLI's
  --keep-images, else $COMPILEGATE_KEEP_IMAGES); the least recently used go first.
- build stages: the Dockerfile's build stage carries `LABEL compilegate.build-stage=<inputs
  sha256>` (build arg BUILD_STAGE_ARG). The classic builder leaves a stage's last image
  untagged (`<none>`: torch's environment before it is copied into the image, 1.7 GB for a
  CPU torch). It is removed after each build, successful or not, by that value, so a build
  of another version on the same engine keeps its own; `compilegate images prune` removes
  every one (an interrupted build's). The build stage is then never a cache for the next
  build: a build with other requirements installs torch again (a minute on a CPU, the wheel
  download for CUDA) rather than keep 1.7-6 GB per version on the disk.
- untagged: an image of ours whose tag moved to a rebuilt image (`--rebuild`).

Last use is the engine's `Metadata.LastTagTime`, which `mark_used` renews by tagging a reused
image again with its own tag: a label is fixed when the image is built, and a state file on
the runner would disagree with the engine after a `docker rmi` or on a fresh disk. An image
whose tag time is unset counts from its creation.

Never removed: an image any container was created from, running or stopped (`docker rmi`
would refuse it too, but only after untagging the first of two tags of ours).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .outcome import LogSink

IMAGE_REPOSITORY = "compilegate-torch"
LABEL_TORCH_VERSION = "compilegate.torch-version"
LABEL_INPUTS_SHA256 = "compilegate.inputs-sha256"
LABEL_SOURCES_SHA256 = "compilegate.sources-sha256"
LABEL_BUILD_STAGE = "compilegate.build-stage"
BUILD_STAGE_ARG = "COMPILEGATE_BUILD_STAGE"
DEFAULT_KEEP_IMAGES = 2
KEEP_IMAGES_ENV = "COMPILEGATE_KEEP_IMAGES"

_OUR_TAG = re.compile(rf"^{IMAGE_REPOSITORY}:[A-Za-z0-9_.-]+-[0-9a-f]{{12}}$")
_ENGINE_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")
_NEVER = datetime.min.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class StoredImage:
    """One image of ours in the engine: its tags of our form, what built it, its size (layers
    it shares with other images included), when it was last used, and whether a container
    was created from it."""

    image_id: str
    tags: tuple[str, ...]
    torch_version: str
    sources_sha256: str
    size_bytes: int
    created: datetime
    last_used: datetime
    in_use: bool

    @classmethod
    def from_engine(cls, image: Any, used_ids: frozenset[str]) -> StoredImage | None:
        """None when the image is not ours (no inputs label, or no tag of our form)."""
        labels = image.labels or {}
        tags = tuple(tag for tag in image.tags if _OUR_TAG.match(tag))
        if LABEL_INPUTS_SHA256 not in labels or not tags:
            return None
        attrs = image.attrs
        created = engine_time(attrs.get("Created")) or _NEVER
        tagged = engine_time((attrs.get("Metadata") or {}).get("LastTagTime"))
        return cls(
            image_id=image.id,
            tags=tags,
            torch_version=str(labels.get(LABEL_TORCH_VERSION, "")),
            sources_sha256=str(labels.get(LABEL_SOURCES_SHA256, "")),
            size_bytes=int(attrs.get("Size") or 0),
            created=created,
            last_used=max(created, tagged) if tagged is not None else created,
            in_use=image.id in used_ids,
        )


@dataclass(frozen=True)
class Removal:
    """An image to remove and why: `superseded` or `surplus`."""

    image: StoredImage
    reason: str


def engine_time(text: object) -> datetime | None:
    """The engine's RFC 3339 time (nanoseconds, `Z`) as an aware datetime; None when absent
    or unset (the engine writes year 1)."""
    match = _ENGINE_TIME.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    fraction = (match.group(2) or "")[:6].ljust(6, "0")
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    moment = datetime.fromisoformat(f"{match.group(1)}.{fraction}{zone}")
    return None if moment.year <= 1 else moment


def stored_images(client: Any) -> list[StoredImage]:
    """Our images in the engine, the most recently used first."""
    used = frozenset(
        str(container.get("ImageID", "")) for container in client.api.containers(all=True)
    )
    found = []
    for image in client.images.list(name=IMAGE_REPOSITORY, filters={"label": LABEL_INPUTS_SHA256}):
        stored = StoredImage.from_engine(image, used)
        if stored is not None:
            found.append(stored)
    return sorted(found, key=lambda s: (s.last_used, s.image_id), reverse=True)


def plan_removals(
    images: Iterable[StoredImage],
    *,
    sources: str | None,
    keep_images: int,
    superseded: bool = True,
    building: tuple[str, str] | None = None,
) -> list[Removal]:
    """What goes (module docstring), in order: with `superseded`, every image whose sources
    are not `sources` (None: unknown, none goes); then per torch version of `sources`, the
    least recently used beyond `keep_images`. `building` (version, tag): that version keeps
    one fewer, room for the image about to be built under that tag (an image with the tag
    already, a rebuild's, does not count). An image in use is never planned; it still
    counts against its version's number."""
    if keep_images < 1:
        raise ValueError(f"keep_images must be at least 1, not {keep_images}")
    images = list(images)
    plan: list[Removal] = []
    if superseded and sources is not None:
        plan += [
            Removal(image, "superseded")
            for image in images
            if image.sources_sha256 != sources and not image.in_use
        ]
    by_version: dict[str, list[StoredImage]] = {}
    for image in images:
        if sources is not None and image.sources_sha256 == sources:
            by_version.setdefault(image.torch_version, []).append(image)
    for version, group in sorted(by_version.items()):
        allowed = keep_images
        if building is not None and building[0] == version:
            group = [image for image in group if building[1] not in image.tags]
            allowed -= 1
        oldest_first = sorted(group, key=lambda s: (s.last_used, s.image_id))
        excess = len(group) - allowed
        for image in oldest_first:
            if excess <= 0:
                break
            if not image.in_use:
                plan.append(Removal(image, "surplus"))
                excess -= 1
    return plan


def remove_images(client: Any, plan: Iterable[Removal], *, log: LogSink) -> int:
    """Removes each planned image by its tags (a tag someone else gave it keeps it); the
    bytes the removed images took (layers shared with images kept stay on disk). An image the
    engine refuses (a container created from it meanwhile) is kept, and said so."""
    from docker.errors import APIError

    freed = 0
    for removal in plan:
        image = removal.image
        why = _why(removal)
        try:
            for tag in image.tags:
                client.images.remove(tag)
        except APIError as exc:
            log(f"kept {image.tags[0]}, {why}: {exc.explanation or exc}")
            continue
        freed += image.size_bytes
        log(f"removed {image.tags[0]}, {why} ({image.size_bytes / 1e9:.1f} GB)")
    return freed


def kept_in_use(images: Iterable[StoredImage], sources: str, *, log: LogSink) -> None:
    """Says which images of other sources stay because a container uses them."""
    for image in images:
        if image.sources_sha256 != sources and image.in_use:
            log(f"kept {image.tags[0]}, built by another compilegate: used by a container")


def mark_used(client: Any, image_id: str, tag: str) -> None:
    """Renews the image's last use (module docstring): tags it again with its own tag. An
    engine that refuses leaves the old time (the image may then go sooner), nothing more."""
    from docker.errors import APIError

    repository, _, name = tag.partition(":")
    try:
        client.api.tag(image_id, repository, name)
    except APIError:
        pass


def prune_build_stages(client: Any, inputs_sha256: str | None = None) -> int:
    """Removes the untagged build stages of one build (its inputs sha256) or, with None, of
    every compilegate build; the bytes freed."""
    label = LABEL_BUILD_STAGE if inputs_sha256 is None else f"{LABEL_BUILD_STAGE}={inputs_sha256}"
    found = client.images.prune(filters={"dangling": True, "label": label})
    return int((found or {}).get("SpaceReclaimed") or 0)


def prune_untagged(client: Any) -> int:
    """Removes our images that lost their tag (a rebuild moved it); the bytes freed."""
    found = client.images.prune(filters={"dangling": True, "label": LABEL_INPUTS_SHA256})
    return int((found or {}).get("SpaceReclaimed") or 0)


def leftovers(client: Any) -> tuple[int, int]:
    """How many untagged images our builds left (build stages, images whose tag moved), and
    their size (each with the layers below it)."""
    found: dict[str, int] = {}
    for label in (LABEL_BUILD_STAGE, LABEL_INPUTS_SHA256):
        for image in client.images.list(filters={"dangling": True, "label": label}):
            found[image.id] = int(image.attrs.get("Size") or 0)
    return len(found), sum(found.values())


def remove_untagged_image(client: Any, image_id: str) -> None:
    """Removes one image whose tag moved (a rebuild's old image) unless something holds it."""
    from docker.errors import APIError, ImageNotFound

    try:
        image = client.images.get(image_id)
        if not image.tags:
            client.images.remove(image_id)
    except (APIError, ImageNotFound):
        pass


def _why(removal: Removal) -> str:
    image = removal.image
    if removal.reason == "superseded":
        return "built by another compilegate"
    used = image.last_used.strftime("%Y-%m-%d %H:%M")
    return f"the least recently used image of torch {image.torch_version} (last used {used} UTC)"
