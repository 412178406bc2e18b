"""Rows made by hand for the tests of what the report does with a verdict (the first screen,
the terminal, the overall verdict), where no judge ran: their facts are only their words.

    row = said_row("compile_s", "regression", threshold=25.0)   # words: "said"
    with_said_words fixture: report/row_words knows how to word them
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from compilegate.gate.row_facts_base import RowFactsBase
from compilegate.gate.verdict import MetricVerdict
from compilegate.report import row_words
from compilegate.report.row_words.worded import WordedRow, words_only

KIND = "said_in_a_test"


@dataclass(frozen=True)
class SaidFacts(RowFactsBase):
    kind: ClassVar[str] = KIND
    text: str = "said"


def said_row(metric: str, verdict: str, text: str = "said", **fields: Any) -> MetricVerdict:
    fields.setdefault("step", "train")
    fields.setdefault("variant", "default")
    fields.setdefault("facts", SaidFacts(text))
    return MetricVerdict(metric=metric, verdict=verdict, **fields)  # type: ignore[arg-type]


@pytest.fixture
def with_said_words(monkeypatch: pytest.MonkeyPatch) -> None:
    judged = row_words.by_family

    def said(row: MetricVerdict) -> WordedRow:
        facts: object = row.facts
        return words_only(facts.text) if isinstance(facts, SaidFacts) else judged(row)

    monkeypatch.setattr(row_words, "by_family", said)
