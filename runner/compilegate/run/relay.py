"""Output of measured code, relayed to a log GitHub Actions reads, cannot become a command.

The runner treats a line starting with `::` (`::add-mask::`, `::stop-commands::`,
`::set-output`, `::error`) and any `##[` (the older syntax, anywhere in the line) as a
workflow command; a carriage return or another control character could start a new line in
the reader's eyes. Every line compilegate relays from a child, a container or a venv run
passes through `neutralise`: control characters become visible escapes, a leading `::`
becomes `: :` and `##[` becomes `## [`. Only stdlib, so `child/`'s neighbours may use it.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_LEADING_COMMAND = re.compile(r"^(\s*):(?=:)")


def neutralise(line: str) -> str:
    """The line as it may be printed to a workflow log: never a workflow command."""
    line = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)
    line = line.replace("##[", "## [")
    return _LEADING_COMMAND.sub(r"\1: ", line)
