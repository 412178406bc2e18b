"""The base of what a judge found, as values (each metric family's facts are defined beside
its judge); the report composes every word of a row from them (report/row_words/)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class RowFacts:
    """What a judge found, as values: the base of each metric family's facts (defined
    beside its judge). The report composes every word of a row from these
    (report/row_words/); `kind` names the family's facts in the JSON."""

    kind: ClassVar[str] = "facts"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}
