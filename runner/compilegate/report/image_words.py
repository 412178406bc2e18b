"""`compilegate images` in words: the images compilegate keeps in the Docker engine, and what
`prune` removed (containers/image_store.py decides what goes)."""

from __future__ import annotations

from collections.abc import Sequence

from ..containers.image_store import KEEP_IMAGES_ENV, Removal, StoredImage

NO_SOURCES = (
    "this installation has no compilegate source tree, so which images an earlier "
    "compilegate built is not known: none of them is removed"
)


def _gb(size_bytes: int) -> str:
    return f"{size_bytes / 1e9:.1f} GB"


def render_image_list(
    images: Sequence[StoredImage],
    *,
    sources: str | None,
    keep_images: int,
    leftover_count: int,
    leftover_bytes: int,
) -> str:
    """One line per image of ours (most recently used first), then the build stages left
    and the number kept per torch version."""
    lines = []
    if not images:
        lines.append("no compilegate images")
    else:
        width = max(len(image.tags[0]) for image in images)
        lines.append(
            f"{'IMAGE':<{width}}  {'TORCH':<10} {'SIZE':>8}  {'LAST USED (UTC)':<16}  BUILT BY"
        )
        for image in images:
            built_by = (
                "this compilegate" if image.sources_sha256 == sources else "another compilegate"
            )
            in_use = ", used by a container" if image.in_use else ""
            used = image.last_used.strftime("%Y-%m-%d %H:%M")
            lines.append(
                f"{image.tags[0]:<{width}}  {image.torch_version:<10} {_gb(image.size_bytes):>8}  "
                f"{used:<16}  {built_by}{in_use}"
            )
        shared = "each size includes the layers it shares with the others"
        lines.append(f"{len(images)} images ({shared})")
    if leftover_count:
        lines.append(
            f"left by builds: {leftover_count} untagged images ({_gb(leftover_bytes)}): "
            "`compilegate images prune` removes them"
        )
    if sources is None:
        lines.append(NO_SOURCES)
    lines.append(
        f"kept per torch version: at most {keep_images} images of this compilegate "
        f"(--keep-images, ${KEEP_IMAGES_ENV})"
    )
    return "\n".join(lines) + "\n"


def removal_line(removal: Removal) -> str:
    """What prune would remove, and why (--dry-run)."""
    image = removal.image
    why = (
        "built by another compilegate"
        if removal.reason == "superseded"
        else f"beyond the {image.torch_version} images kept, the least recently used"
    )
    return f"would remove {image.tags[0]} ({_gb(image.size_bytes)}): {why}"


def leftovers_dry_run_line(count: int, size_bytes: int) -> str:
    return f"would remove {count} untagged images left by builds ({_gb(size_bytes)})"


def pruned_line(freed_bytes: int) -> str:
    """What prune gave back: the engine's layers before less after (`docker system df`)."""
    return f"freed {_gb(freed_bytes)} of image layers"
