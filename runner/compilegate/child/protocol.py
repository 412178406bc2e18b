"""What the parent and the measuring child agree on: the entry point and the progress lines.

The parent (run/) imports this module to write a child's spec and to read its output; it
holds no logic, only the shared vocabulary. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Lines the child writes on stderr to say what it is doing; the parent relays them.
PROGRESS_PREFIX = "compilegate-progress: "


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
