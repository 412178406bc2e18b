"""report/row_words/__init__.py `worded_row`: one dispatch over a row's facts family gives
everything report/ says of the row (worded.py `WordedRow`): its sentence and the facts its
cells show. Issue 53, item 8: the cells, the first screen, the headline, the details and the
verdict JSON read that one value, made once per row for a whole comment, and none of them
asks a family module again.

mypy checks that the dispatch's `match` names every family (it ends in `assert_never`);
these check that each family's case yields the value, and that a comment words each row once.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from gate_docs import compile_cost, result, step, variant
from report_runs import judge

from compilegate.gate import compare  # noqa: F401  (loads every judge and its facts)
from compilegate.gate.comparability import (
    ConfigChangedFacts,
    ConfigMismatch,
    SettingChange,
    StepConfigChange,
)
from compilegate.gate.judges.compile_cost import (
    CompileInstructionsFacts,
    CompileWorkFacts,
    CountChange,
    InstructionsJudgement,
    WorkJudgement,
)
from compilegate.gate.row_facts import RowFacts
from compilegate.gate.verdict import Acceptance, MetricVerdict, Verdict
from compilegate.report import row_words
from compilegate.report.comment import render_comment
from compilegate.report.row_words import row_message, worded_row
from compilegate.report.row_words.past_limit import CountMoved
from compilegate.report.row_words.worded import WordedRow

# Facts whose fields must agree with each other to be worded (the rest are built from their
# types alone, `_facts`).
MADE_BY_HAND: dict[type, Any] = {
    ConfigChangedFacts: ConfigChangedFacts(
        StepConfigChange(ConfigMismatch.SETTINGS, (SettingChange("warmup", 1, 2),))
    ),
    CompileInstructionsFacts: CompileInstructionsFacts(InstructionsJudgement.NOT_COUNTED),
}


def _value(kind: Any) -> Any:
    """A plain value of a field's type: an enum's first member, an empty tuple, None for an
    optional, a dataclass built the same way."""
    if typing.get_origin(kind) in (types.UnionType, typing.Union):
        members = typing.get_args(kind)
        return None if type(None) in members else _value(members[0])
    if typing.get_origin(kind) is tuple:
        return ()
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next(iter(kind))
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _facts(kind)
    return {bool: False, int: 1, float: 1.0, str: "x"}[kind]


def _facts(cls: type) -> Any:
    if cls in MADE_BY_HAND:
        return MADE_BY_HAND[cls]
    fields = typing.get_type_hints(cls)
    needed = {
        f.name: _value(fields[f.name])
        for f in dataclasses.fields(cls)
        if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return cls(**needed)


@pytest.mark.parametrize("family", typing.get_args(RowFacts), ids=lambda c: c.__name__)
def test_every_facts_family_yields_one_worded_row(family: type) -> None:
    row = MetricVerdict("train", "default", "speedup", Verdict.PASS, facts=_facts(family))
    said = worded_row(row)
    assert isinstance(said, WordedRow)
    assert said.text() and said.text() == row_message(row)


def _compile_work_row(verdict: Verdict, **fields: Any) -> MetricVerdict:
    changes = (CountChange("graphs", 1, 5, 400.0), CountChange("fx_nodes", 100, 100, 0.0))
    facts = CompileWorkFacts(WorkJudgement.JUDGED, changes, 5.0)
    return MetricVerdict(
        "train", "default", "compile_work", verdict, facts=facts, unit="count", baseline=1,
        current=5, change=400.0, threshold=5.0, change_unit="pct", **fields,
    )  # fmt: skip


def test_a_compile_work_row_gives_its_cells_the_counts_beside_its_sentence() -> None:
    said = worded_row(_compile_work_row(Verdict.REGRESSION))
    assert said.sentence.lead == "compile work"
    assert said.past_limit is not None and said.past_limit.counts == (CountMoved("graphs", 1, 5),)
    assert said.count_shown == CountMoved("graphs", 1, 5)
    assert said.look is None  # a failing row: ❌, not ⚠️


def test_an_accepted_row_says_the_regression_and_keeps_only_the_facts_of_its_values() -> None:
    """The regression's sentence and who accepted it; the count its values show, but no
    counts past the limit (a failing row's) and no look (a passing row's)."""
    by = Acceptance("compilegate: accept", "maintainer", "0123456789abcdef")
    regression = worded_row(_compile_work_row(Verdict.REGRESSION))
    said = worded_row(_compile_work_row(Verdict.ACCEPTED, accepted_by=by))
    assert said.text() == (
        f'{regression.text()}; accepted by @maintainer (label "compilegate: accept") at '
        "0123456789ab"
    )
    assert said.count_shown == regression.count_shown and said.past_limit is None
    assert said.look is None


def test_a_comment_words_each_row_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first screen (headline, rows to look at, reasons) and the details read one value
    per row: its family's words are composed once for the whole comment."""
    base = result(step(variants=[variant(compile_s=10.0)]))
    slower = variant(compile_s=14.0)
    slower["compile_cost"] = compile_cost(14.0, counts={"graphs": 5})
    run_set = judge(tmp_path, base, result=result(step(variants=[slower])))
    worded: list[int] = []
    by_family = row_words.by_family

    def counted(row: MetricVerdict) -> WordedRow:
        worded.append(id(row))
        return by_family(row)

    monkeypatch.setattr(row_words, "by_family", counted)
    comment = render_comment(run_set)
    assert "graphs 1 → 5" in comment  # the cell and the reason read the counts said once
    rows = [
        row for version in run_set.versions if version.verdict for row in version.verdict.verdicts
    ]
    assert len(rows) > 5 and sorted(worded) == sorted(id(row) for row in rows)
