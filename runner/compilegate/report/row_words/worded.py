"""A gate row as report/ says it, composed once: its sentence, and the facts of its cells
that only some families have. Every caller in report/ (the table cells, the first screen,
the headline, the details, the verdict JSON) reads this one value, made by one dispatch
over the row's facts family (row_words/__init__.py `worded_row`), and none asks a family
module again.

    sentence       the row's sentence in its parts (sentence.py)
    past_limit     compile work: the counts past the limit, the first shown in the cell
    count_shown    compile work: the count whose values the gate gave the row
    raw_ms         a step time judged in yardstick units: the milliseconds behind it
    too_few_pairs  paired speed: the pairs, fewer than judge anything
    look           a passing row that needs a look all the same, and why: exact counts
                   that moved within their tolerance, or numerics checked without its
                   float64 reference
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .moved_counts import MovedWithinTolerance
from .numerics_reference import WithoutReference
from .past_limit import CountMoved, PastLimit
from .sentence import RowSentence

# Why a passing row gets ⚠️ all the same (looks.py).
Look: TypeAlias = MovedWithinTolerance | WithoutReference


@dataclass(frozen=True)
class WordedRow:
    """Everything report/ says of one gate row (the module's docstring names each field)."""

    sentence: RowSentence
    past_limit: PastLimit | None = None
    count_shown: CountMoved | None = None
    raw_ms: tuple[float, float, float] | None = None
    too_few_pairs: int | None = None
    look: Look | None = None

    def text(self) -> str:
        """The whole sentence."""
        return self.sentence.text()


def words_only(text: str) -> WordedRow:
    """A row of a family whose cells need nothing beyond the row: its sentence alone."""
    return WordedRow(RowSentence("", text))
