"""`compilegate images list|prune`: the images compilegate keeps in the Docker engine, for a
runner's operator (containers/image_store.py says what is kept and what goes).

`list` shows each image of ours (tag, torch version, size, last use, which compilegate built
it, whether a container uses it) and the untagged images builds left. `prune` removes what a
build would (images of another compilegate, each torch version's least recently used beyond
--keep-images) and every untagged image of ours; --dry-run says what it would remove.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..containers.image_store import (
    DEFAULT_KEEP_IMAGES,
    KEEP_IMAGES_ENV,
    leftovers,
    plan_removals,
    prune_build_stages,
    prune_untagged,
    remove_images,
    stored_images,
)
from ..errors import UsageError
from ..report.image_words import (
    leftovers_dry_run_line,
    pruned_line,
    removal_line,
    render_image_list,
)


def keep_images_count(text: str) -> int:
    """--keep-images (and $COMPILEGATE_KEEP_IMAGES, its default): a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of images, at least 1, not {text!r} "
            f"(--keep-images, or ${KEEP_IMAGES_ENV})"
        )
    return value


def add_keep_images_argument(cmd: Any) -> None:
    """--keep-images, shared by `matrix` and `images prune`."""
    cmd.add_argument(
        "--keep-images",
        type=keep_images_count,
        default=os.environ.get(KEEP_IMAGES_ENV) or str(DEFAULT_KEEP_IMAGES),
        metavar="N",
        help="docker: the most images of one torch version kept from this compilegate (other "
        "requirements, wheels or base image); the least recently used go first (default: "
        f"${KEEP_IMAGES_ENV}, else {DEFAULT_KEEP_IMAGES})",
    )


def add_parser(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "images",
        help="list or prune the Docker images compilegate built (a runner's disk)",
        description=(
            "The images `matrix --backend docker` and the action built, and what their builds "
            "left. A build already removes what `prune` removes; prune is for a runner that "
            "lowered --keep-images, or an interrupted build. Images without compilegate's "
            "labels, tags given by hand and images a container uses are never removed."
        ),
    )
    actions = cmd.add_subparsers(dest="images_action", metavar="ACTION")
    actions.required = True
    listing = actions.add_parser("list", help="each image, its size and last use")
    add_keep_images_argument(listing)
    listing.set_defaults(func=command_images_list)
    prune = actions.add_parser(
        "prune",
        help="remove images of other compilegates, the least recently used beyond "
        "--keep-images, and untagged images builds left",
    )
    add_keep_images_argument(prune)
    prune.add_argument(
        "--keep-old-images",
        action="store_true",
        help="keep the images an earlier compilegate built",
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    prune.set_defaults(func=command_images_prune)


def command_images_list(args: argparse.Namespace) -> int:
    client = _client()
    count, size_bytes = leftovers(client)
    sys.stdout.write(
        render_image_list(
            stored_images(client),
            sources=_current_sources(),
            keep_images=args.keep_images,
            leftover_count=count,
            leftover_bytes=size_bytes,
        )
    )
    return 0


def command_images_prune(args: argparse.Namespace) -> int:
    client = _client()
    plan = plan_removals(
        stored_images(client),
        sources=_current_sources(),
        keep_images=args.keep_images,
        superseded=not args.keep_old_images,
    )
    if args.dry_run:
        count, size_bytes = leftovers(client)
        for removal in plan:
            sys.stdout.write(removal_line(removal) + "\n")
        sys.stdout.write(leftovers_dry_run_line(count, size_bytes) + "\n")
        return 0
    before_bytes = _layers_bytes(client)
    remove_images(client, plan, log=_say)
    prune_build_stages(client)
    prune_untagged(client)
    sys.stdout.write(pruned_line(before_bytes - _layers_bytes(client)) + "\n")
    return 0


def _layers_bytes(client: Any) -> int:
    """The engine's image layers on disk, each counted once (`docker system df`)."""
    return int(client.df().get("LayersSize") or 0)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")


def _client() -> Any:
    try:
        import docker

        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # no SDK, no socket, daemon down
        raise UsageError(
            f"images: the Docker engine is unreachable ({type(exc).__name__}); start it"
        ) from None
    return client


def _current_sources() -> str | None:
    """This compilegate's sources digest (images.sources_digest), or None when it was
    installed without its source tree (it builds no image then)."""
    from ..containers.images import ImageSpec, sources_digest

    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file() or not (root / "Dockerfile").is_file():
        return None
    return sources_digest(ImageSpec("0", root))
