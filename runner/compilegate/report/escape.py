"""Make text from user code or torch inert in GitHub-flavoured markdown.

Exception messages, graph-break reasons, guard text and file names come from the pull
request under review or from torch: in the comment they must stay text. They must not open
HTML tags or close our `<details>`, form links or images, autolink a URL, @mention a person
or team, link an issue or pull request (`#123`, `owner/repo#7`, `GH-123`: GitHub would also
list the comment on that issue's timeline), end a table cell, or start a heading, list or code
block. Bidirectional controls (U+202E …) would reorder what the reader sees (Trojan Source):
they are shown as their code point, never applied.
"""

from __future__ import annotations

import re

# The ASCII punctuation that can open or close inline markdown (emphasis, code, links,
# images, strikethrough, table cells). GFM honours a backslash before any ASCII punctuation.
# Block syntax (`#`, `-`, `1.`) needs a line start, and inert text never starts a line.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]!|~])")
_WORD_JOINER = "\u2060"  # invisible; breaks @mentions, #refs and autolinks without a visible mark
# GitHub's autolinked references to issues and pull requests: `#26`, `GH-26`, `owner/repo#26`
# (docs.github.com, "Autolinked references and URLs"); a joiner after `#` or `GH-` breaks each.
_ISSUE_REFERENCE = re.compile(r"(?i)(#|\bGH-)(?=\d)")
# Unicode's Bidi_Control characters: ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI.
_BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MAX_CELL_CHARS = 300
# A table cell wraps only at spaces: a longer run of other characters would widen the table
# past the 780 px conversation column (tests/browser), so it gets an invisible break point.
_LONG_RUN = re.compile(r"(\S{16})(?=\S)")
_ZERO_WIDTH_SPACE = "\u200b"
# A number keeps its unit on its line (`+25 %`, `36.2 s`, `3,100 steps`): a no-break space.
_NUMBER_UNIT = re.compile(r"(\d) (ms|s|%|GiB|MiB|KiB|B|steps)(?=$|[\s),;.])")


def inert(text: object, *, max_chars: int | None = None) -> str:
    """One line of plain text, safe anywhere inline (paragraph, list item, table cell)."""
    flat = " ".join(str(text).split())
    if max_chars is not None and len(flat) > max_chars:
        flat = flat[: max_chars - 1] + "…"
    flat = _BIDI_CONTROL.sub(lambda m: f"[U+{ord(m.group()):04X}]", flat)
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = _MARKDOWN_PUNCTUATION.sub(r"\\\1", flat)
    # A mention or a bare URL is recognised on the rendered text, after escapes are gone:
    # an invisible joiner keeps `@team`, `://` and `www.` from being what GitHub looks for.
    flat = flat.replace("@", "@" + _WORD_JOINER)
    flat = _ISSUE_REFERENCE.sub(r"\1" + _WORD_JOINER, flat)
    flat = flat.replace("://", ":" + _WORD_JOINER + "//")
    flat = re.sub(r"(?i)\bwww\.", "www" + _WORD_JOINER + ".", flat)
    return flat


def cell(text: object) -> str:
    """A table cell: inert, short enough to keep the table readable, and breakable."""
    flat = " ".join(str(text).split())
    if len(flat) > _MAX_CELL_CHARS:
        flat = flat[: _MAX_CELL_CHARS - 1] + "…"
    flat = inert(_LONG_RUN.sub(r"\1" + _ZERO_WIDTH_SPACE, flat))
    # after inert(), which folds whitespace (a no-break space too)
    return _NUMBER_UNIT.sub("\\1\u00a0\\2", flat)
