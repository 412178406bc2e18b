"""The one table helper: aligned plain-text tables (wrapped to a width) and GitHub-flavoured
markdown tables."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Sequence

# A number and its unit stay on one line when a cell wraps (`36.2 s`, not `36.2` / `s`).
# `(+4.5 %)`: the unit may end the text or stand before a bracket.
_NUMBER_UNIT = re.compile(r"(\d) (ms|s|%|GiB|MiB|KiB|B|steps)(?!\w)")
_GLUE = "\u00a0"
# A word longer than this may be broken to fit a column.
WORD_CAP = 24


_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text for a terminal: control characters from user code (an escape sequence in an
    exception message could rewrite the screen) shown as `?`; line breaks kept."""
    return _CONTROL.sub("?", text)


def display_width(text: str) -> int:
    """Terminal columns: wide characters (❌, CJK) take two, joiners and selectors none."""
    width = 0
    for char in text:
        if char == "\ufe0f":  # emoji presentation: the symbol before it takes two columns
            width += 1
            continue
        if char in "\u200b\u2060" or unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def text_table(
    rows: Sequence[Sequence[object]], *, indent: str = "", width: int | None = None
) -> list[str]:
    """Rows (the first is the header) as left-aligned columns separated by two spaces. With
    `width`, the widest columns are narrowed and their cells wrapped onto more lines until
    every line fits (a single word longer than its column keeps its length)."""
    if not rows:
        return []
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [max(display_width(row[i]) for row in cells) for i in range(len(cells[0]))]
    if width is not None:
        widths = _narrow(cells, widths, width - len(indent))
    lines = []
    for row in cells:
        wrapped = [_wrap(c, w) for c, w in zip(row, widths)]
        for k in range(max(len(parts) for parts in wrapped)):
            parts = [p[k] if k < len(p) else "" for p in wrapped]
            lines.append((indent + "  ".join(_pad(p, w) for p, w in zip(parts, widths))).rstrip())
    return lines


def _glued(text: str) -> str:
    return _NUMBER_UNIT.sub(r"\1" + _GLUE + r"\2", text)


def _wrap(text: str, width: int) -> list[str]:
    # textwrap counts characters; a wide one (❌) takes a column more than it counts
    extra = display_width(text) - len(text)
    lines = textwrap.wrap(_glued(text), max(1, width - max(0, extra)), break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines] or [""]


def _narrow(cells: list[list[str]], widths: list[int], room: int) -> list[int]:
    """Narrow the columns with the most room to spare first; break words only when every
    column is down to its longest word (at most WORD_CAP columns)."""
    widths = list(widths)
    longest = [
        max([display_width(word) for row in cells for word in _glued(row[i]).split()] or [0])
        for i in range(len(widths))
    ]
    for floors in ([max(3, min(WORD_CAP, n)) for n in longest], [3] * len(widths)):
        while sum(widths) + 2 * (len(widths) - 1) > room:
            wide = max(range(len(widths)), key=lambda i: widths[i] - floors[i])
            if widths[wide] <= floors[wide]:
                break
            widths[wide] -= 1
    return widths


def wrap(text: str, width: int = 100, *, indent: str = "", hanging: str = "") -> list[str]:
    """Words into lines of at most `width` terminal columns: the first line starts with
    `indent`, the others with `hanging` (a longer word keeps its own line)."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        lead = indent if not lines else hanging
        if current and display_width(lead + current) + 1 + display_width(word) > width:
            lines.append(lead + current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append((indent if not lines else hanging) + current)
    return lines


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GFM table. Cells must already be escaped for markdown (no raw `|` or newlines)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines
