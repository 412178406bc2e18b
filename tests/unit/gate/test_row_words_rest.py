"""The words of the numerics, memory, torch-state and whole-step rows, composed in
report/row_words/ from their judges' facts, on branches the golden verdicts do not hold;
and an accepted row: the regression's words, then who accepted it."""

from __future__ import annotations

from gate_docs import judge_documents, result, step, variant

from compilegate.gate.acceptance import accept
from compilegate.gate.comparability import (
    ConfigMismatch,
    DefinitionChangedFacts,
    SettingChange,
)
from compilegate.gate.judges.numerics import NumericsOutcome
from compilegate.gate.judges.torch_state import TorchStateFacts, TorchStateOutcome
from compilegate.gate.rules import Subject
from compilegate.gate.verdict import Acceptance, Verdict
from compilegate.report.row_words import row_message

FIVE = ["grad:a", "grad:b", "grad:c", "grad:d", "grad:e"]
LABEL = "compilegate: accept"


def only(report, metric):
    (row,) = report.rows(metric=metric)
    return row


def test_numerics_that_still_fail_name_three_tensors_and_count_the_rest():
    base = variant(numerics="fail", failed_tensors=FIVE)
    cur = variant(numerics="fail", failed_tensors=FIVE)
    row = only(
        judge_documents(result(step(variants=[base])), result(step(variants=[cur]))), "numerics"
    )
    assert row.facts.outcome is NumericsOutcome.STILL_FAILS and row.verdict == "pass"
    assert row_message(row) == (
        "numerics still fail, as in the baseline: grad:a, grad:b, grad:c and 2 more"
    )


def test_numerics_the_run_did_not_check_give_the_checks_own_reason():
    cur = variant(numerics="error")
    cur["numerics"]["reason"] = "RuntimeError: out of memory"
    row = only(judge_documents(result(step()), result(step(variants=[cur]))), "numerics")
    assert (row.verdict, row.facts.run.reason) == ("missing", "RuntimeError: out of memory")
    assert row_message(row) == (
        "numerics not checked in this run (error: RuntimeError: out of memory)"
    )


def test_memory_that_fell_beyond_the_threshold():
    cur = variant(peak_bytes=1_000_000_000)
    row = only(judge_documents(result(step()), result(step(variants=[cur]))), "peak_bytes")
    assert row.verdict == "improvement" and row.facts.change_pct == -50.0
    assert row_message(row) == (
        "peak memory 1.9 GiB → 953.7 MiB (-50.0 %): fell by more than the 10 % threshold"
    )


def test_a_run_that_did_not_record_torch_state():
    row = Subject("train", "eager").row(
        "torch_state", Verdict.PASS, facts=TorchStateFacts(TorchStateOutcome.NOT_RECORDED)
    )
    assert row_message(row) == "torch state: not recorded in this run"


def test_a_changed_definition_names_each_key_with_both_values():
    changes = (
        SettingChange("mode", "default", "max-autotune"),
        SettingChange("dynamic", None, True),
    )
    row = Subject("train", "v").row(
        "variant", Verdict.INCOMPARABLE, facts=DefinitionChangedFacts(changes)
    )
    assert row_message(row) == (
        "not compared: the variant's definition changed: mode 'default' → 'max-autotune', "
        "dynamic None → True"
    )


def test_lowered_power_is_a_change_of_the_steps_configuration_with_its_floor():
    base, cur = step(), step()
    base["settings"]["variant_processes"] = 4
    cur["settings"]["variant_processes"] = 2
    row = only(judge_documents(result(base), result(cur)), "step")
    (change,) = row.facts.change.changes
    assert row.facts.change.what is ConfigMismatch.SETTINGS and change.lowered_power
    assert row_message(row) == (
        "not compared: the step's configuration changed: variant_processes 4 → 2 (the "
        "baseline's policy times the step in at least 4: fewer processes lower the gate's "
        "power)"
    )


def test_an_accepted_row_keeps_its_regression_words_and_names_who_accepted_it():
    report = judge_documents(
        result(step()), result(step(variants=[variant(peak_bytes=3_000_000_000)]))
    )
    maintainer = Acceptance(LABEL, "maintainer", "c" * 40)
    row = only(accept(report, LABEL, maintainer), "peak_bytes")
    assert (row.verdict, row.accepted_by) == ("accepted", maintainer)
    assert row_message(row) == (
        "peak memory 1.9 GiB → 2.8 GiB (+50.0 %): grew by more than the 10 % threshold; "
        'accepted by @maintainer (label "compilegate: accept") at cccccccccccc'
    )
    assert row.to_dict()["accepted_by"] == maintainer.to_dict()
