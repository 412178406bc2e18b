"""The config schema bounds every value a pull request's compilegate.yml can hold (issue 51):
a `maxLength` on every string, a `maxItems` on every list, and patterns that match in time
linear in the string, run only on strings within their bound."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from compilegate.schemas import bounded_validator, load_schema

# A pattern that backtracks takes seconds on this many characters (the torch version's old
# pattern: 6 s on `1.` + 40,000 ones + `!`, quadratic; 175.8 s on the 262 KB of issue 51);
# a linear one, about a millisecond.
PUMPED_CHARS = 40_000
PATTERN_BUDGET_S = 0.25


def schema_nodes(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema of `node`, with where it is."""
    if isinstance(node, dict):
        if "type" in node or "pattern" in node or "items" in node:
            yield where, node
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                yield from schema_nodes(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from schema_nodes(value, f"{where}/{index}")


def kinds(node: dict[str, Any]) -> set[str]:
    declared = node.get("type", [])
    return {declared} if isinstance(declared, str) else set(declared)


def test_every_string_has_a_max_length_and_every_list_max_items() -> None:
    nodes = list(schema_nodes(load_schema("config")))
    strings = [(where, n) for where, n in nodes if "string" in kinds(n) or "pattern" in n]
    lists = [(where, n) for where, n in nodes if "array" in kinds(n) or "items" in n]
    assert len(strings) >= 7 and len(lists) >= 4  # the walk found them
    assert [where for where, n in strings if "maxLength" not in n] == []
    assert [where for where, n in lists if "maxItems" not in n] == []


def patterns() -> list[str]:
    found = {n["pattern"] for _, n in schema_nodes(load_schema("config")) if "pattern" in n}
    return sorted(found)


def pathological(length: int) -> Iterator[str]:
    """Strings a backtracking pattern of this schema's kind is slow on: a prefix that
    starts a match, a long run it can split many ways, a tail that fails it at the end."""
    for prefix in ("", "1.", "1.1", "a", "a:", "_"):
        for pump in ("1", "a", ".", "1.", ".1", "a:", ":", "_", "+", "@", "-", "a ", "+1"):
            for tail in ("!", "\n!", ":", "\n", "\r"):
                yield prefix + pump * (length // len(pump)) + tail


@pytest.mark.parametrize("pattern", patterns())
def test_each_pattern_answers_a_pathological_string_in_linear_time(pattern: str) -> None:
    """With the regex engine jsonschema runs `pattern` with (stock keyword: re.search), no
    maxLength in front of it."""
    stock = jsonschema.Draft202012Validator({"type": "string", "pattern": pattern})
    for text in pathological(PUMPED_CHARS):
        started = time.process_time()
        stock.is_valid(text)
        took_s = time.process_time() - started
        assert took_s < PATTERN_BUDGET_S, f"{pattern!r}: {took_s:.2f} s on {text[:20]!r}…"


@pytest.mark.parametrize(
    ("valid", "version"),
    [
        (True, "2.10.0"),
        (True, "2.9"),
        (True, "2.11.0.dev20260101+cu128"),
        (True, "2.1.0+cpu"),
        (False, "2"),
        (False, "2."),
        (False, ".2.1"),
        (False, "2.x"),
        (False, "2.1 "),
        (False, "v2.1.0"),
    ],
)
def test_the_version_pattern_keeps_its_language(valid: bool, version: str) -> None:
    torch = load_schema("config")["properties"]["torch"]
    assert jsonschema.Draft202012Validator(torch).is_valid([version]) is valid


def test_a_value_over_its_bound_is_not_matched_nor_compared() -> None:
    """The length keyword reports it; the pattern and the pairwise comparison, quadratic on
    a list sorted() cannot order, are not run (jsonschema runs every keyword otherwise)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 8, "pattern": "^[a-z]+$"},
            "list": {"type": "array", "maxItems": 4, "uniqueItems": True},
        },
    }
    validator = bounded_validator(schema)
    over = {"name": "A" * 9, "list": [0, "0", 0, "0", 1]}
    assert sorted(e.validator for e in validator.iter_errors(over)) == ["maxItems", "maxLength"]
    within = {"name": "A", "list": [0, "0", 0]}
    assert sorted(e.validator for e in validator.iter_errors(within)) == [
        "pattern",
        "uniqueItems",
    ]
