"""gate/row_facts.py: `RowFacts`, the closed union of what a judge can find for a row.

mypy checks that report/row_words/ words every member of the union (its `match` ends in
`assert_never`); this checks the other half: every facts class a judge defines is a member,
so none can reach the report outside the check.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import ClassVar

import pytest

from compilegate.gate import compare  # noqa: F401  (loads every judge and its facts)
from compilegate.gate.comparability import AddedFacts, Scope
from compilegate.gate.row_facts import RowFacts
from compilegate.gate.row_facts_base import RowFactsBase
from compilegate.gate.verdict import MetricVerdict
from compilegate.report.row_words import row_message


def _facts_classes(cls: type) -> set[type]:
    """The facts classes below `cls` that name themselves in the JSON (their own `kind`)."""
    found = set()
    for sub in cls.__subclasses__():
        if "kind" in vars(sub):
            found.add(sub)
        found |= _facts_classes(sub)
    return found


def test_every_facts_class_a_judge_defines_is_in_the_union() -> None:
    members = set(typing.get_args(RowFacts))
    defined = {c for c in _facts_classes(RowFactsBase) if c.__module__.startswith("compilegate.")}
    assert defined - members == set(), "facts classes outside RowFacts (gate/row_facts.py)"
    assert members - defined == set()


def test_each_family_keeps_its_own_kind_in_the_json() -> None:
    kinds = [member.kind for member in typing.get_args(RowFacts)]
    assert len(kinds) == len(set(kinds)) == 23
    row = MetricVerdict("train", None, "step", "pass", facts=AddedFacts(Scope.STEP))
    assert row.to_dict()["facts"] == {"kind": "added", "scope": Scope.STEP}
    assert row_message(row) == "new step: not in the baseline"


def test_facts_outside_the_union_are_refused_not_worded() -> None:
    @dataclass(frozen=True)
    class Unlisted(RowFactsBase):
        kind: ClassVar[str] = "unlisted"

    with pytest.raises(TypeError, match="Unlisted is not a member of RowFacts"):
        row_message(MetricVerdict("train", None, "step", "pass", facts=Unlisted()))
