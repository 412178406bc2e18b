"""One source of truth for what makes two runs of a step comparable (config.COMPARABLE_SETTINGS):
changing any of those settings makes the baseline of that step `incomparable`, naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_docs import judge_documents, result, step

from compilegate.config import COMPARABLE_SETTINGS
from compilegate.config.loading import load_config_text
from compilegate.report.row_words import row_message
from compilegate.results.document import step_skeleton

BASE_STEP = """\
version: 1
steps:
  - name: mlp
    entry: examples/test_steps/tiny_mlp.py:make_step
    threads: 1
"""
# One edit per comparable setting; the test below fails when a setting is added without one.
EDITS = {
    "device": "    device: cpu\n",
    "warmup": "    warmup: 7\n",
    "iterations": "    iterations: 60\n",
    "rounds": "    rounds: 5\n",
    "seed": "    seed: 3\n",
    "amp": "    amp: bf16\n",
    "threads": "    threads: 8\n",
    "numerics": "    numerics: {tol: 1.0e-2}\n",
    "epoch_length": "    epoch: {length: 100}\n",
    "distributed": "    distributed: {wrapper: ddp, world_size: 2}\n",
}


def step_document(config_text: str, repo_root: Path) -> dict:
    """A measured step (gate_docs) carrying the real config's settings and fingerprint."""
    config = load_config_text(config_text, source="compilegate.yml", repo_root=repo_root)
    skeleton = step_skeleton(config.steps[0])
    doc = step("mlp")
    doc.update({key: skeleton[key] for key in ("entry", "config_fingerprint", "settings")})
    return doc


def test_every_comparable_setting_has_an_edit_here():
    assert set(EDITS) == set(COMPARABLE_SETTINGS)


def test_the_result_records_every_comparable_setting(repo_root: Path):
    settings = step_document(BASE_STEP, repo_root)["settings"]
    assert set(COMPARABLE_SETTINGS) <= set(settings)


@pytest.mark.parametrize("setting", COMPARABLE_SETTINGS)
def test_changing_a_setting_makes_the_step_incomparable_naming_it(setting: str, repo_root: Path):
    if setting == "threads":
        edited = BASE_STEP.replace("    threads: 1\n", EDITS[setting])
    else:
        edited = BASE_STEP + EDITS[setting]
    base = step_document(BASE_STEP, repo_root)
    cur = step_document(edited, repo_root)
    assert base["config_fingerprint"] != cur["config_fingerprint"]
    report = judge_documents(result(base), result(cur))
    rows = [row for row in report.verdicts if row.step == "mlp"]
    assert [row.verdict for row in rows] == ["incomparable"], rows
    assert f"{setting} " in row_message(rows[0]), row_message(rows[0])


def test_unchanged_settings_stay_comparable(repo_root: Path):
    report = judge_documents(
        result(step_document(BASE_STEP, repo_root)), result(step_document(BASE_STEP, repo_root))
    )
    assert report.overall == "pass"


def test_deleting_the_epoch_line_makes_the_step_incomparable(repo_root: Path):
    """Issue 29: a baseline that ran the epoch's last batch, a pull request whose config no
    longer says so: its recompile there would go unseen, so the step is not judged."""
    with_epoch = BASE_STEP + EDITS["epoch_length"]
    report = judge_documents(
        result(step_document(with_epoch, repo_root)), result(step_document(BASE_STEP, repo_root))
    )
    (row,) = [row for row in report.verdicts if row.step == "mlp"]
    assert row.verdict == "incomparable"
    assert "epoch_length 100 → None" in row_message(row), row_message(row)


def test_a_baseline_from_before_the_epoch_setting_reads_as_no_epoch(repo_root: Path):
    """A baseline written before `epoch_length` was recorded ran no epoch's end: a run that
    runs none either stays comparable, and its fingerprint is unchanged."""
    base = step_document(BASE_STEP, repo_root)
    assert base["config_fingerprint"] == "16c70de5a2f68e6c"  # as compilegate 303b4ed hashed it
    del base["settings"]["epoch_length"]
    report = judge_documents(result(base), result(step_document(BASE_STEP, repo_root)))
    assert report.overall == "pass"
    with_epoch = result(step_document(BASE_STEP + EDITS["epoch_length"], repo_root))
    assert judge_documents(result(base), with_epoch).overall == "incomparable"
