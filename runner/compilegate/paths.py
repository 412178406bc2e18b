"""Path containment, shared by every wing (standard library only: the child imports it too)."""

from __future__ import annotations

from pathlib import Path


def is_inside(path: Path, root: Path) -> bool:
    """True when `path` is `root` or lies under it (both taken as given: resolve first)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True
