"""Make text from user code or torch inert in GitHub-flavoured markdown.

Exception messages, graph-break reasons, guard text and file names come from the pull
request under review or from torch: in the comment they must stay text. They must not open
HTML tags or close our `<details>`, form links or images, autolink a URL, @mention a person
or team, link an issue or pull request (`#123`, `owner/repo#7`, `GH-123`: GitHub would also
list the comment on that issue's timeline), end a table cell, or start a heading, list or code
block. Bidirectional controls (U+202E …) would reorder what the reader sees (Trojan Source):
they are shown as their code point, never applied.

A code span (`code_span`, `with_code`) keeps its text literal: inside one, GitHub renders no
HTML, emphasis, link or autolink, and its mention and reference filters skip `<code>`. What
could break out of one is a backtick run as long as its fence (the fence is made longer than
any run inside), a line break (whitespace is folded to one line) and, in a table, a `|`
(escaped as GFM's table extension asks, even inside code).
"""

from __future__ import annotations

import re

from .tables import glued

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


# `(at examples/step.py:12)` at the end of a user exception (child/user_code.py).
_LOCATION = re.compile(r" \(at [^()\s]+:\d+\)$")


def shortened(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars` with `…`, its location at the end (` (at model.py:57)`)
    kept whole: where the step failed is what a reader needs first."""
    if len(text) <= max_chars:
        return text
    found = _LOCATION.search(text)
    tail = found.group(0) if found and len(found.group(0)) < max_chars // 2 else ""
    head = text[: len(text) - len(tail)] if tail else text
    return head[: max_chars - len(tail) - 1].rstrip() + "…" + tail


def inert(text: object, *, max_chars: int | None = None) -> str:
    """One line of plain text, safe anywhere inline (paragraph, list item, table cell)."""
    return _inert_flat(_flat(text, max_chars))


def _flat(text: object, max_chars: int | None = None) -> str:
    """One line: whitespace folded, cut at `max_chars` (shortened: its location kept),
    bidi controls shown, not applied."""
    flat = " ".join(str(text).split())
    if max_chars is not None:
        flat = shortened(flat, max_chars)
    return _BIDI_CONTROL.sub(lambda m: f"[U+{ord(m.group()):04X}]", flat)


def _inert_flat(flat: str) -> str:
    """Escape one folded line (its edges kept: it may sit between code spans)."""
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
    return glued(flat)


_BACKTICK_RUN = re.compile(r"`+")
# A part of a message its author quoted in single backticks (torch's hints do: `torch.cond`);
# a longer run of backticks is not a quote, and stays text.
_QUOTED = re.compile(r"(?<!`)`([^`]+)`(?!`)")


def code_span(text: object, *, in_table: bool = False, max_chars: int | None = None) -> str:
    """`text` as one inline code span whatever it holds (backticks, `</details>`, `@team`,
    `#12`, a URL): its fence is longer than any backtick run inside, padded with a space when
    the text starts or ends with a backtick (GFM strips one). `in_table`: for a table cell,
    where even inside code a `|` ends the cell unless escaped."""
    flat = _flat(text, max_chars)
    if not flat:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    if in_table:
        # GFM's table scanner reads a backslash and the character after it as a pair, so
        # a backslash of the text before our escaped pipe would pair with our backslash
        # and free the pipe: a word joiner (invisible) stands between them.
        flat = flat.replace("\\|", "\\\u2060|").replace("|", "\\|")
    return f"{fence}{pad}{flat}{pad}{fence}"


def with_code(text: object, *, max_chars: int | None = None) -> str:
    """Inert text in which the parts its author quoted in backticks read as code: torch's
    "set `torch._dynamo.config.capture_scalar_outputs = True`" shows the setting as code,
    not as backticks. Not for a table cell (a `|` inside a quote would end it)."""
    flat = _flat(text, max_chars)
    out, last = [], 0
    for quoted in _QUOTED.finditer(flat):
        out += [_inert_flat(flat[last : quoted.start()]), code_span(quoted.group(1))]
        last = quoted.end()
    out.append(_inert_flat(flat[last:]))
    return "".join(out)
