"""A gate row as report/ says it, composed once: its sentence, and the facts of its cells
that only some families have. Every caller in report/ (the table cells, the first screen,
the headline, the details, the verdict JSON) reads this one value, made by one dispatch
over the row's facts family (row_words/__init__.py `worded_row`), and none asks a family
module again.

    WordedRows     every row of a run set with its WordedRow, composed once for a whole
                   report (row_words.worded_rows)

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from ...gate.verdict import MetricVerdict
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

    def accepted(self, clause: str) -> WordedRow:
        """A regression's words once it is accepted: its sentence and `clause` (who accepted
        it); of its cell facts, those of its values (the count and the milliseconds they
        show, too few pairs), none that a verdict decides (counts past the limit are a
        failing row's, a look a passing row's)."""
        return WordedRow(
            self.sentence.with_after(clause),
            count_shown=self.count_shown,
            raw_ms=self.raw_ms,
            too_few_pairs=self.too_few_pairs,
        )


@dataclass(frozen=True)
class WordedRows:
    """Every gate row of a run set with what report/ says of it, composed once for a whole
    report: the headline, the first screen's rows and reasons, the upgrade's changes and each
    version's gate rows read it here. Keyed by the row object itself (`id`, the row held
    beside it so that its id stays its own): rows that the report copied are not in it."""

    by_row_id: Mapping[int, tuple[MetricVerdict, WordedRow]]

    def of(self, row: MetricVerdict) -> WordedRow:
        """What report/ says of `row`, a row of the run set this was made for."""
        found = self.by_row_id.get(id(row))
        if found is None or found[0] is not row:
            raise LookupError(f"{row.metric} of {row.step}: not a row of this run set")
        return found[1]


def words_only(text: str) -> WordedRow:
    """A row of a family whose cells need nothing beyond the row: its sentence alone."""
    return WordedRow(RowSentence("", text))
