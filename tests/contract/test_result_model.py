"""results/model.py mirrors schemas/result.schema.json: the same properties at every level,
the same required ones, the same status values; and the real documents go through both
doors unchanged."""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from collections.abc import Mapping

import pytest
from golden_verdicts import read_text, stored_documents

from compilegate.results import model
from compilegate.schemas import load_schema, validation_errors

SCHEMA = load_schema("result")
RECOMMENDATION = SCHEMA["$defs"]["step"]["properties"]["recommendation"]


def resolve(node: dict) -> dict:
    while True:
        if "$ref" in node:
            target: dict = SCHEMA
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = target
            continue
        arms = [a for a in node.get("oneOf", []) + node.get("anyOf", []) if a.get("type") != "null"]
        if len(arms) == 1 and "properties" not in node:
            node = arms[0]
            continue
        objects = [a for a in arms if "properties" in a]  # beside an older document's words
        if len(objects) == 1 and "properties" not in node:
            node = objects[0]
            continue
        return node


def model_class(annotation) -> type | None:
    """The document class an annotation holds (itself, optional, or a tuple of it)."""
    for arm in typing.get_args(annotation) or (annotation,):
        if typing.get_origin(arm) is tuple:
            return model_class(typing.get_args(arm)[0])
        if isinstance(arm, type) and issubclass(arm, model.Model):
            return arm
    return None


def pairs(cls: type, node: dict, path: str = "$"):
    """(path, class, object schema) for the document and every class it holds."""
    yield path, cls, node
    hints = typing.get_type_hints(cls)
    for item in dataclasses.fields(cls):
        inner = model_class(hints[item.name])
        if inner is None:
            continue
        sub = resolve(node["properties"][item.name])
        if sub.get("type") == "array" or "items" in sub:
            sub = resolve(sub["items"])
        yield from pairs(inner, sub, f"{path}.{item.name}")


ALL = list(pairs(model.ResultDocument, SCHEMA))


def test_every_class_is_reached():
    reached = {cls for _, cls, _ in ALL}
    declared = {
        value
        for value in vars(model).values()
        if isinstance(value, type) and issubclass(value, model.Model) and value is not model.Model
    }
    assert declared == reached


@pytest.mark.parametrize(("path", "cls", "node"), ALL, ids=[p for p, _, _ in ALL])
def test_fields_are_the_schemas_properties(path, cls, node):
    fields = {item.name for item in dataclasses.fields(cls)}
    assert fields == set(node["properties"])


@pytest.mark.parametrize(("path", "cls", "node"), ALL, ids=[p for p, _, _ in ALL])
def test_required_fields_are_the_schemas(path, cls, node):
    """A required property is a field without a default, or one written even when null."""
    without_default = {
        item.name
        for item in dataclasses.fields(cls)
        if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
    }
    assert without_default | set(cls.REQUIRED) == set(node.get("required", ()))


@pytest.mark.parametrize(
    ("values", "node"),
    [
        (model.Status, SCHEMA["$defs"]["step"]["properties"]["status"]),
        (model.Status, SCHEMA["$defs"]["variant"]["properties"]["status"]),
        (model.NumericsStatus, SCHEMA["$defs"]["numerics"]["properties"]["status"]),
        (model.ComparedBy, SCHEMA["$defs"]["numerics"]["properties"]["compared_by"]),
        (model.Decision, SCHEMA["$defs"]["payoff"]["properties"]["decision"]),
        (model.Decision, RECOMMENDATION["properties"]["decision"]),
    ],
)
def test_enums_are_the_schemas(values: type[enum.Enum], node):
    assert {member.value for member in values} == set(node["enum"])


DOCUMENTS = stored_documents()


def _without_nulls(value):
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _as_the_door_upgrades(raw: dict) -> dict:
    """`raw` with what the door fills in for an older shape (results/model.py's docstring):
    a config block from before accept_label carries the default label."""
    config = raw.get("config")
    if isinstance(config, dict) and "accept_label" not in config:
        return {**raw, "config": {**config, "accept_label": model.DEFAULT_ACCEPT_LABEL}}
    return raw


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_stored_documents_go_through_both_doors_unchanged(name):
    """Every key a stored document holds comes back out (a null may be left out), and what
    comes out is a valid document that parses to the same thing."""
    raw = json.loads(read_text(DOCUMENTS[name]))
    role = "baseline" if name.startswith(("old-", "updated-")) else "result"
    parsed = model.parse(raw, name, role)
    written = parsed.to_json()
    assert _without_nulls(written) == _without_nulls(_as_the_door_upgrades(raw))
    assert validation_errors(written, role, may_lack=model.KEYS_OLD_BASELINES_LACK) == []
    assert model.parse(written, name, role) == parsed


def nullable(node: dict) -> bool:
    if "$ref" in node:
        target: dict = SCHEMA
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return nullable(target)
    kinds = node.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    if None in node.get("enum", ()):
        return True
    return any(nullable(arm) for arm in node.get("oneOf", []) + node.get("anyOf", []))


def test_a_variant_that_ran_writes_its_nullable_measurements_as_null():
    variant = SCHEMA["$defs"]["variant"]
    required_when_ok = variant["allOf"][0]["then"]["required"]
    expected = {key for key in required_when_ok if nullable(variant["properties"][key])}
    assert set(model.MEASURED_WHEN_OK) == expected


def test_a_decided_recommendation_writes_the_payoffs_nullable_figures_as_null():
    payoff = SCHEMA["$defs"]["payoff"]
    expected = {key for key in payoff["required"] if nullable(payoff["properties"][key])}
    assert set(model.PAYOFF_NULLS) == expected
