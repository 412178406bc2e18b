"""One annotation as GitHub Actions prints it: an `::error`/`::warning`/`::notice` workflow
command, pinned to a file and line when known.

What to annotate is the report's decision (report/annotations.py); GitHub's per-step limit
and the writing are github/'s (github/actions_env.py `limit_annotations`, github/publish.py).
The type is the report's, so the report imports nothing of github/ (github/ stands above
report/ and takes it from here). Only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LEVELS = ("error", "warning", "notice")


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped (as @actions/core does)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as `escape_data`, plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    """One `::error`/`::warning`/`::notice` line, pinned to a file and line when known."""

    level: Literal["error", "warning", "notice"]
    message: str
    file: str | None = None
    line: int | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"annotation level must be one of {LEVELS}, got {self.level!r}")
        if self.line is not None and (self.file is None or self.line < 1):
            raise ValueError(f"annotation line {self.line} needs a file and must be >= 1")

    def format_workflow_command(self) -> str:
        properties = [
            f"{key}={escape_property(str(value))}"
            for key, value in (("file", self.file), ("line", self.line), ("title", self.title))
            if value is not None
        ]
        spec = f"{self.level} {','.join(properties)}" if properties else self.level
        return f"::{spec}::{escape_data(self.message)}"
