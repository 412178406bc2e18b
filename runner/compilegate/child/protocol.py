"""What the parent and the measuring child agree on: the entry point and the progress lines.

The parent (run/) imports this module to write a child's spec and to read its output; it
holds no logic, only the shared vocabulary. Standard library only.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

# Lines the child writes on stderr to say what it is doing; the parent shows them as its own.
# Their prefix carries a token the parent draws for each child (the spec's `progress_token`):
# the step's own output shares the child's stderr, and a line it writes with a copied prefix
# (`compilegate-progress: ::add-mask::…`) is its output, not progress (issue 29). The token is
# no secret from code written to find it (it runs in the same process); such a line is still
# defused like all output (workflow_log.py), it only looks like progress.
PROGRESS_PREFIX = "compilegate-progress"


def progress_prefix(token: str) -> str:
    """What starts each progress line of the child that was given `token`."""
    return f"{PROGRESS_PREFIX} {token}: "


# The phases of a child's work, in order, as the progress message that starts each begins
# (`phase_of`): what `phases_s` in a process record and bench/time_to_verdict.py add up.
PHASES = (
    ("start", ()),  # the harness importing torch, before the first progress line
    ("import", ("importing",)),
    ("build", ("building",)),
    ("eager warm-up", ("eager warm-up",)),
    ("compile", ("compiling", "compiled warm-up")),
    ("timed", ("measuring", "round ")),
    ("memory/epoch", ("epoch end", "peak memory")),
    ("reference", ("numerics: float64 reference",)),
    ("numerics", ("numerics",)),
)


def phase_of(message: str) -> str:
    """The phase a progress message starts ("other" for one no phase names)."""
    for name, starts in PHASES:
        if starts and message.startswith(starts):
            return name
    return "other"


def new_progress_token() -> str:
    """A fresh token for one child (the parent's side)."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class EntryPoint:
    """A resolved `path/file.py:function` or `package.module:function`."""

    spec: str
    file: str
    function: str
    line: int
    module: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "file": self.file,
            "function": self.function,
            "line": self.line,
            "module": self.module,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EntryPoint:
        return cls(raw["spec"], raw["file"], raw["function"], raw["line"], raw.get("module"))
