"""The JSON Schemas in schemas/ are the public contract: they must be valid schemas, and the
files we ship must satisfy them."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from compilegate.schemas import SCHEMA_NAMES, load_schema, validation_errors
from repo_helpers import REPO_ROOT


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(f"/{name}.schema.json")


@pytest.mark.parametrize(
    "config",
    sorted(p.relative_to(REPO_ROOT) for p in REPO_ROOT.glob("examples/**/compilegate*.yml")),
)
def test_shipped_configs_satisfy_the_config_schema(config: Path) -> None:
    document = yaml.safe_load((REPO_ROOT / config).read_text())
    assert validation_errors(document, "config") == []


def test_config_schema_refuses_unknown_keys_everywhere() -> None:
    base = {"version": 1, "steps": [{"name": "a", "entry": "a.py:f"}]}
    assert validation_errors(base, "config") == []
    for broken in (
        {**base, "extra": 1},
        {**base, "steps": [{"name": "a", "entry": "a.py:f", "extra": 1}]},
        {**base, "steps": [{"name": "a", "entry": "a.py:f", "variants": [{"mod": "default"}]}]},
        {**base, "defaults": {"warmup": 1, "extra": 1}},
        {**base, "thresholds": {"speedup_drop": 5}},
    ):
        assert validation_errors(broken, "config"), broken


def test_baseline_schema_is_the_result_schema() -> None:
    minimal = {
        "schema_version": 1,
        "tool": {"name": "compilegate", "version": "0"},
        "created_at": "2026-01-01T00:00:00+00:00",
        "environment": {"torch": "2.13.0", "device": "cpu", "gpu_name": None, "python": "3.11"},
        "steps": [],
    }
    assert validation_errors(minimal, "baseline") == []
    assert validation_errors({**minimal, "schema_version": 2}, "baseline")
