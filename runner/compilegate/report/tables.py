"""The one layout helper: GitHub-flavoured markdown tables, and plain text for a terminal
that never breaks a number — sentences wrapped between words, tables whose cells wrap
between words or, when the columns cannot fit, rows stacked as `label: name value · name
value` lines; a column with one value on every row said once below instead
(drop_constant_columns). A number keeps its unit (`36.2 s`, `−10 %`, `1,500 steps`) in a
markdown cell too (escape.cell), and a word longer than the line keeps a line of its own."""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Sequence

# A number and its unit stay on one line when text wraps (`36.2 s`, not `36.2` / `s`).
# `(+4.5 %)`: the unit may end the text or stand before a bracket.
_NUMBER_UNIT = re.compile(r"(\d) (ms|s|%|×|GiB|MiB|KiB|B|steps|min|h)(?!\w)")
_GLUE = "\u00a0"


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


def glued(text: str) -> str:
    """Each number joined to its unit by a no-break space."""
    return _NUMBER_UNIT.sub(r"\1" + _GLUE + r"\2", text)


def wrap_words(text: str, width: int, *, indent: str = "", hanging: str = "") -> list[str]:
    """Words into lines of at most `width` columns; a number stays with its unit, and a
    word is never broken (a longer one keeps a line of its own)."""
    lines: list[str] = []
    current = indent
    for word in glued(text.strip()).split(" "):
        if not word:
            continue
        lead = hanging if lines else indent
        if current.strip() and display_width(current) + 1 + display_width(word) > width:
            lines.append(current)
            current = hanging + word
        else:
            current = f"{current} {word}" if current.strip() else lead + word
    if current.strip():
        lines.append(current)
    return [line.replace(_GLUE, " ").rstrip() for line in lines]


def fit_table(rows: Sequence[Sequence[str]], width: int, *, indent: str = "") -> list[str]:
    """Rows (the first is the header) as aligned columns no wider than `width`, cells wrapped
    only between words; when even that does not fit, every row stacked as `first: name value
    · name value` lines. A word (a number with its unit) is never broken."""
    cells = [[glued(str(c)) for c in row] for row in rows]
    widths = _column_widths(cells, width - display_width(indent))
    if widths is None:
        return _stacked(cells, width, indent)
    lines = []
    for row in cells:
        wrapped = [_cell_lines(c, wd) for c, wd in zip(row, widths)]
        for k in range(max(len(parts) for parts in wrapped)):
            parts = [p[k] if k < len(p) else "" for p in wrapped]
            text = "  ".join(p + " " * (wd - display_width(p)) for p, wd in zip(parts, widths))
            lines.append((indent + text).rstrip().replace(_GLUE, " "))
    return lines


def _column_widths(cells: list[list[str]], room: int) -> list[int] | None:
    """Each column as wide as its widest cell, the widest narrowed first, none below its
    longest word; None when that is still too wide."""
    columns = range(len(cells[0]))
    widths = [max(display_width(row[i]) for row in cells) for i in columns]
    floors = [max(display_width(word) for row in cells for word in row[i].split()) for i in columns]
    gaps = 2 * (len(widths) - 1)
    while sum(widths) + gaps > room:
        spare = max(columns, key=lambda i: widths[i] - floors[i])
        if widths[spare] <= floors[spare]:
            return None
        widths[spare] -= 1
    return widths


def _cell_lines(text: str, width: int) -> list[str]:
    if display_width(text) <= width:
        return [text]
    extra = display_width(text) - len(text)  # textwrap counts characters, not columns
    return textwrap.wrap(
        text, max(1, width - extra), break_long_words=False, break_on_hyphens=False
    ) or [""]


def _stacked(cells: list[list[str]], width: int, indent: str) -> list[str]:
    """`default: speedup 1.34× (1.26–1.42) · eager ms 16.07 · …`, wrapped between items (an
    item too long for a line of its own between its words)."""
    header, body = cells[0], cells[1:]
    lines: list[str] = []
    room = width - display_width(indent) - 4
    for row in body:
        items = [
            f"{name} {value}" if display_width(f"{name} {value}") > room
            else f"{name} {value}".replace(" ", _GLUE)
            for name, value in zip(header[1:], row[1:])
            if value != ""
        ]  # fmt: skip
        text = f"{row[0]}: " + " · ".join(items)
        lines += wrap_words(text, width, indent=indent, hanging=indent + "    ")
    return lines


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GFM table. Cells must already be escaped for markdown (no raw `|` or newlines)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def drop_constant_columns(
    header: Sequence[str], rows: list[list[str]], keep: int = 2
) -> tuple[list[str], list[list[str]], list[str]]:
    """Leave out columns (after the first `keep`) whose value is the same on every row; the
    third item says each left-out value once (`numerics: pass on every row`)."""
    if len(rows) < 2:
        return list(header), rows, []
    columns = range(len(header))
    constant = [i for i in columns if i >= keep and len({r[i] for r in rows}) == 1]
    said = [f"{header[i]}: {rows[0][i]}" for i in constant]
    kept = [i for i in columns if i not in constant]
    return [header[i] for i in kept], [[r[i] for i in kept] for r in rows], said
