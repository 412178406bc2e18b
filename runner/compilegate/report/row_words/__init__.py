"""Every word of a verdict row, composed from the facts its judge found.

A judge returns values (its family's `RowFacts`, defined beside it in gate/judges/); the
sentence a row shows — in the comment, `report`, `run` and the verdict JSON — is composed
here, one module per metric family, and nowhere else. Nothing in report/ reads numbers back
out of these sentences: a table cell reads the facts.

    row_message(row)   the row's sentence
"""

from __future__ import annotations

from typing import Callable

from ...gate.verdict import MetricVerdict
from .missing import missing_words
from .speed import speed_words

# facts kind -> the function that words a row with such facts. A row without facts still
# carries its judge's own message (a family not moved here yet).
_WORDS: dict[str, Callable[[MetricVerdict], str]] = {
    "missing": missing_words,
    "speed": speed_words,
}


def row_message(row: MetricVerdict) -> str:
    """The sentence that says what this row found."""
    if row.facts is None:
        return row.message
    return _WORDS[row.facts.kind](row)
