"""A run set for the terminal: the verdict per version, then each version's verdict table
(or its result table, without a baseline)."""

from __future__ import annotations

from ..gate.run_set import RunSetVerdict
from .comment import ICONS, deciding_reason
from .result_table import render_result_table
from .verdict_text import render_verdict_table


def render_run_set_text(run_set: RunSetVerdict) -> str:
    lines = [f"compilegate: {run_set.overall.upper()} (exit {run_set.exit_code})"]
    for version in run_set.versions:
        reason = _plain(deciding_reason(version))
        lines.append(
            f"  {version.label} {ICONS.get(version.overall, '')} {version.overall}: {reason}"
        )
    for version in run_set.versions:
        lines += ["", f"== {version.label} ({version.source})"]
        if version.error is not None:
            lines.append(f"error: {version.error}")
        elif version.verdict is not None:
            lines.append(render_verdict_table(version.verdict).rstrip())
        elif version.document is not None:
            lines.append(render_result_table(dict(version.document)).rstrip())
    return "\n".join(lines) + "\n"


def _plain(markdown_text: str) -> str:
    """Undo report/escape.py's markdown escapes for a terminal line."""
    out, escaped = [], False
    for char in markdown_text.replace("\u2060", ""):
        if char == "\\" and not escaped:
            escaped = True
            continue
        out.append(char)
        escaped = False
    return "".join(out).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
