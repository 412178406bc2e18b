"""mkdocs hook (mkdocs.yml `hooks:`): the pages are written for GitHub, which needs a `|`
inside a code span of a table row escaped (`trust\\|ignore`); Python-Markdown's tables already
leave code spans whole and would show the backslash, so the site gets the bare `|`."""

from __future__ import annotations

import re
from typing import Any

_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _unescape_pipes(match: re.Match[str]) -> str:
    return match.group(0).replace("\\|", "|")


def on_page_markdown(markdown: str, **_: Any) -> str:
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("|"):
            lines[i] = _CODE_SPAN.sub(_unescape_pipes, line)
    return "\n".join(lines)
