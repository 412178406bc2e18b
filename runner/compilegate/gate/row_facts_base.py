"""The base class of what a judge found, as values (each metric family's facts are defined
beside its judge, and named in the closed union `RowFacts`, gate/row_facts.py); the report
composes every word of a row from them (report/row_words/)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class RowFactsBase:
    """What a judge found, as values: the base class of each metric family's facts (defined
    beside its judge, each one a member of `RowFacts`). The report composes every word of a
    row from these (report/row_words/); `kind` names the family's facts in the JSON only."""

    kind: ClassVar[str] = "facts"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}
