"""Every field of a step is classified (config.STEP_FIELD_POLICY): compared with the
baseline's, adopted from it, held at least at it, applied from it, or the run's own where it
cannot change a verdict. A pull request writes its own compilegate.yml: a field nobody
classified is one it could change to loosen the gate unseen (issue 29: deleting
`epoch: {length: 100}` hid a recompile at the epoch's end)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from gate_docs import judge_documents, result, step
from test_comparable_settings import BASE_STEP, step_document

from compilegate.config import StepConfig
from compilegate.config.loading import load_config_text
from compilegate.config.model import (
    ADOPTED,
    ADOPTED_SETTINGS,
    AT_LEAST,
    BASELINES,
    COMPARABLE_SETTINGS,
    COMPARED,
    HEAD_OWN,
    IDENTITY,
    POWER_SETTINGS,
    STEP_FIELD_POLICY,
)
from compilegate.gate.policy import adopt_baseline_power
from compilegate.report.note_words import adopted_power_words
from compilegate.results.document import step_skeleton
from compilegate.results.model import parse
from compilegate.run.paired import HEAD_OWN_FIELDS


def test_every_step_field_is_classified_once():
    """Adding a StepConfig field fails here until STEP_FIELD_POLICY says how the gate
    treats it against a baseline."""
    fields = [f.name for f in dataclasses.fields(StepConfig)]
    assert sorted(STEP_FIELD_POLICY) == sorted(fields), (
        "classify the new StepConfig field in config.model.STEP_FIELD_POLICY: "
        f"{sorted(set(fields) ^ set(STEP_FIELD_POLICY))}"
    )
    assert set(STEP_FIELD_POLICY.values()) <= {
        IDENTITY, COMPARED, ADOPTED, AT_LEAST, BASELINES, HEAD_OWN
    }  # fmt: skip


def test_the_derived_lists_follow_the_table():
    assert set(COMPARABLE_SETTINGS) == {
        k for k, how in STEP_FIELD_POLICY.items() if how in (COMPARED, ADOPTED)
    }
    assert "epoch_length" in COMPARABLE_SETTINGS and "epoch_length" in ADOPTED_SETTINGS
    assert set(POWER_SETTINGS) == {"eager_processes", "variant_processes", "cold_compiles"}
    # What the run is free to choose cannot make a regression pass: a deliberate, short list.
    assert {k for k, how in STEP_FIELD_POLICY.items() if how == HEAD_OWN} == {
        "timeout_s",
        "steps_per_run",
        # one later process starts from the first's cache artifacts: the same compiled code
        # timed; its compile seconds are in no cold or warm sample the gate reads
        "cache_artifacts",
        # one more process compiles only the repeated blocks: the variant's `regional` lever
        "regional",
    }


def test_paired_mode_gives_the_head_no_setting_the_gate_compares():
    """In paired mode the base's step decides every field but HEAD_OWN_FIELDS: none of those
    may be one the stored-baseline gate compares or holds to the baseline's."""
    for name in HEAD_OWN_FIELDS:
        assert STEP_FIELD_POLICY[name] in (IDENTITY, BASELINES), name


EPOCH_BASE = BASE_STEP + "    epoch: {length: 100}\n"


@pytest.mark.parametrize(
    ("base_text", "config_text", "adopted"),
    [
        (EPOCH_BASE, BASE_STEP, 100),  # the line deleted: the baseline's epoch is measured
        (EPOCH_BASE, BASE_STEP + "    epoch: {length: 7}\n", 100),
        (BASE_STEP, EPOCH_BASE, None),  # the baseline ran no epoch's end: neither does this
    ],
)
def test_run_with_a_baseline_measures_the_baselines_epoch(
    repo_root: Path, base_text: str, config_text: str, adopted: int | None
):
    baseline = result(step_document(base_text, repo_root))
    config = load_config_text(config_text, source="compilegate.yml", repo_root=repo_root)
    measured, notes = adopt_baseline_power(config, parse(baseline, "b.json", "baseline"))
    assert measured.steps[0].epoch_length == adopted
    (note,) = map(adopted_power_words, notes)
    assert f"epoch_length {adopted} (config: {config.steps[0].epoch_length})" in note
    # what it measures with is then comparable, and judged
    skeleton = step_skeleton(measured.steps[0])
    cur = step("mlp")
    cur.update({key: skeleton[key] for key in ("entry", "config_fingerprint", "settings")})
    assert judge_documents(baseline, result(cur)).overall == "pass"


@pytest.mark.parametrize(
    ("field", "edit"),
    [("timeout_s", "    timeout_s: 5\n"), ("steps_per_run", "    steps_per_run: 100000000\n")],
)
def test_the_runs_own_fields_leave_the_step_comparable(repo_root: Path, field: str, edit: str):
    """timeout_s bounds only this run (running out of it is an error, exit 3); steps_per_run
    is what the recommendation is stated for. Neither is read by a verdict."""
    assert STEP_FIELD_POLICY[field] == HEAD_OWN
    base = step_document(BASE_STEP, repo_root)
    cur = step_document(BASE_STEP + edit, repo_root)
    assert cur["settings"][field] != base["settings"][field]
    assert judge_documents(result(base), result(cur)).overall == "pass"
