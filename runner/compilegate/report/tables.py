"""The one table helper: aligned plain-text tables and GitHub-flavoured markdown tables."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(rows: Sequence[Sequence[object]], *, indent: str = "") -> list[str]:
    """Rows (the first is the header) as left-aligned columns separated by two spaces."""
    if not rows:
        return []
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return [
        (indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths))).rstrip()
        for row in cells
    ]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GFM table. Cells must already be escaped for markdown (no raw `|` or newlines)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines
