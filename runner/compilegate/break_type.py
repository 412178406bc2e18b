"""The short kind of a graph-break reason, shared by the child (a fallback's `type`) and
report/ (a site's note): standard library only, the child imports it too."""

from __future__ import annotations

MAX_TYPE_CHARS = 80


def break_type(reason: str) -> str:
    """The short kind of a summarized reason (its first sentence), for one-line notes."""
    head = reason.split(". ", 1)[0]
    return head if len(head) <= MAX_TYPE_CHARS else head[: MAX_TYPE_CHARS - 3] + "..."
