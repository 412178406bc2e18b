"""compare_to_baseline: each metric's direction, thresholds, the noise rule, the guards."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import pytest
from gate_docs import environment, judge_documents, ratio, recompile, result, site, step, variant

from compilegate.errors import (
    EXIT_NOT_JUDGED,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_RUN_ERROR,
    UsageError,
)
from compilegate.gate.judges.diagnostics import diff_graph_break_sites
from compilegate.gate.judges.speed_medians import round_spread_pct
from compilegate.gate.policy import resolve_thresholds
from compilegate.gate.row_facts_base import RowFactsBase
from compilegate.gate.rules import classify_speed_change, combined_noise_pct
from compilegate.report.note_words import note_words
from compilegate.report.row_words import row_message
from compilegate.results.model import BreakSite, parse
from compilegate.schemas import validation_errors


def compare(base_variant=None, cur_variant=None, *, base_step=None, cur_step=None, **kwargs):
    baseline = result(base_step or step(variants=[base_variant or variant()]))
    current = result(cur_step or step(variants=[cur_variant or variant()]))
    return judge_documents(baseline, current, **kwargs)


def only(report, metric, variant_id="default"):
    rows = [r for r in report.verdicts if r.metric == metric and r.variant == variant_id]
    assert len(rows) == 1, report.verdicts
    return rows[0]


def test_factory_documents_are_valid_results():
    doc = result(
        step(variants=[variant(sites=[site("m.py", 3, "x")], recompiles=2), variant("b")]),
        step("broken", status="error", error="boom", variants=[variant(status="error")]),
    )
    assert validation_errors(doc, "result") == []
    assert validation_errors(doc, "baseline") == []


def test_identical_runs_pass_every_metric():
    report = compare()
    assert report.overall == "pass" and report.exit_code == EXIT_OK
    metrics = {r.metric for r in report.verdicts}
    assert metrics == {
        "eager_step_ms",
        "speedup",
        "compiled_step_ms",
        "compile_s",
        "compile_work",
        "compile_cpu_s",
        "recompiles",
        "graph_break_sites",
        "fallbacks_to_eager",
        "numerics",
        "peak_bytes",
    }
    assert {r.verdict for r in report.verdicts} == {"pass"}


@pytest.mark.parametrize(
    ("speedup", "verdict"),
    [(1.10, "regression"), (1.40, "improvement"), (1.22, "pass"), (1.28, "pass")],
)
def test_speedup_drop_is_bad_and_rise_is_good(speedup, verdict):
    row = only(compare(variant(speedup=1.25), variant(speedup=speedup)), "speedup")
    assert row.verdict == verdict
    assert row.direction == "higher_is_better"
    assert row.change == pytest.approx((speedup - 1.25) / 1.25 * 100)
    assert row.threshold == 5.0


@pytest.mark.parametrize("eager_ms", [11.0, 9.0, 10.3])
def test_eager_step_time_against_one_stored_run_is_reported_not_judged(eager_ms):
    """Medians of a result without process records, against a one-run baseline: nothing
    says how far whole runs land apart (issue 28), so the row never fails the job."""
    report = compare(base_step=step(eager_ms=10.0), cur_step=step(eager_ms=eager_ms))
    row = only(report, "eager_step_ms", "eager")
    assert (row.verdict, row.gated) == ("pass", False)
    assert row.direction == "lower_is_better"
    assert row.change == pytest.approx((eager_ms - 10.0) / 10.0 * 100)
    assert "reported, not judged: 1 of 5 default-branch runs recorded" in row_message(row)
    assert report.exit_code == 0


@pytest.mark.parametrize("ms", [9.0, 7.0])
def test_compiled_step_time_against_one_stored_run_is_reported_not_judged(ms):
    row = only(compare(variant(step_ms=8.0), variant(step_ms=ms)), "compiled_step_ms")
    assert (row.verdict, row.gated) == ("pass", False)
    assert row.change == pytest.approx((ms - 8.0) / 8.0 * 100)


@pytest.mark.parametrize(
    ("base_s", "cur_s", "verdict"),
    [
        (10.0, 14.0, "regression"),  # +40 % > 25 %
        (10.0, 12.0, "pass"),  # +20 %
        (10.0, 5.0, "improvement"),
        (0.2, 0.9, "pass"),  # +350 % but under the 1 s floor: tiny compiles do not flap
        (0.5, 2.0, "regression"),  # +1.5 s against a floor of 1 s: +150 %
    ],
)
def test_compile_time_growth_with_absolute_floor(base_s, cur_s, verdict):
    """Where the baseline's policy gates compile wall time (a dedicated runner)."""
    gated = {"gate_compile_wall_time": True}
    report = compare(
        base_step=step(variants=[variant(compile_s=base_s)], settings=gated),
        cur_step=step(variants=[variant(compile_s=cur_s)]),
    )
    row = only(report, "compile_s")
    assert row.verdict == verdict and row.gated
    assert row.noise_pct is None


def test_compile_wall_time_never_fails_the_job_unless_the_baseline_gates_it():
    """Wall time moves with the machine's load (x3.4 with two busy neighbours): by default
    it is reported, and the pull request's own config cannot switch the gate on or off."""
    cur = step(variants=[variant(compile_s=40.0)], settings={"gate_compile_wall_time": True})
    report = compare(variant(compile_s=10.0), cur_step=cur)
    row = only(report, "compile_s")
    assert (row.verdict, row.gated, report.exit_code) == ("pass", False, EXIT_OK)
    assert row.change == pytest.approx(300.0)
    assert "reported, not gated" in row_message(row) and "gate_compile_wall_time" in row_message(
        row
    )
    assert any(
        "gate_compile_wall_time True (applied: False)" in n for n in map(note_words, report.notes)
    )


def test_more_recompiles_is_a_regression_naming_the_new_one():
    event = recompile("forward", "model.py", 51, "len(x) == 32")
    row = only(compare(variant(), variant(recompile_events=[event])), "recompiles")
    assert row.verdict == "regression"
    assert (row.baseline, row.current, row.change) == (0, 1, 1.0)
    assert "forward at model.py:51: len(x) == 32" in row_message(row)


def test_fewer_recompiles_is_an_improvement():
    assert only(compare(variant(recompiles=3), variant(recompiles=1)), "recompiles").verdict == (
        "improvement"
    )


def test_new_graph_break_site_is_named():
    new = site("model.py", 42, "Data-dependent branching")
    row = only(compare(variant(), variant(sites=[new])), "graph_break_sites")
    assert row.verdict == "regression"
    assert "new graph break at model.py:42: Data-dependent branching" in row_message(row)


def test_graph_break_that_only_moved_lines_is_not_new():
    before = [site("model.py", 42, "Data-dependent branching")]
    after = [site("model.py", 45, "Data-dependent branching")]
    row = only(compare(variant(sites=before), variant(sites=after)), "graph_break_sites")
    assert row.verdict == "pass"


def test_graph_break_gone_is_an_improvement():
    gone = [site("model.py", 42, "Data-dependent branching"), site("loss.py", 7, "print")]
    row = only(compare(variant(sites=gone), variant(sites=gone[:1])), "graph_break_sites")
    assert row.verdict == "improvement"
    assert "loss.py:7" in row_message(row)


def typed_sites(*sites: dict) -> list[BreakSite]:
    """JSON-shaped sites as a variant's parsed `graph_breaks` holds them."""
    raw = variant(sites=list(sites))
    return list(
        parse(result(step(variants=[raw])), "r.json").steps[0].variants[0].graph_breaks.sites
    )


def test_graph_break_sites_are_compared_as_a_set_not_a_count():
    new, gone = diff_graph_break_sites(
        typed_sites(site("a.py", 1, "x", count=5)),
        typed_sites(site("a.py", 1, "x", count=9), site("b.py", 2, "y")),
    )
    assert [s.file for s in new] == ["b.py"] and gone == []


def break_site(file: str, line: int, origin: str, cause: tuple[str, int], reason: str) -> dict:
    """A site as the child reports it since one break is one site: split, cause, origin."""
    cause_doc = {"file": cause[0], "line": cause[1], "reason": reason}
    return {**site(file, line, reason), "origin": origin, "cause": cause_doc}


GPT2_SPLIT = ("transformers/models/gpt2/modeling_gpt2.py", 703)
GPT2_CAUSE = ("transformers/modeling_utils.py", 4778)


def test_a_new_break_inside_an_installed_library_is_a_regression_named_with_its_cause():
    new = break_site(*GPT2_SPLIT, "library", GPT2_CAUSE, "logging.Logger method not supported")
    row = only(compare(variant(), variant(sites=[new])), "graph_break_sites")
    assert row.verdict == "regression"
    assert (
        "new graph break at transformers/models/gpt2/modeling_gpt2.py:703 "
        "(cause: transformers/modeling_utils.py:4778): logging.Logger method not supported"
    ) in row_message(row)
    assert (row.baseline, row.current) == (0, 1)


def test_torchs_own_internal_breaks_are_listed_but_not_gated():
    optimizer = ("torch/optim/optimizer.py", 79)
    internal = break_site(*optimizer, "torch", optimizer, "Call to torch._dynamo.graph_break()")
    row = only(compare(variant(), variant(sites=[internal])), "graph_break_sites")
    assert row.verdict == "pass" and (row.baseline, row.current) == (0, 0)


def test_two_breaks_splitting_one_call_are_two_sites_when_causes_are_recorded():
    """`return self.head(self.encoder(h))`: both inner breaks cut forward at the same line."""
    first = break_site("model.py", 45, "repo", ("encoder.py", 9), "print")
    second = break_site("model.py", 45, "repo", ("head.py", 4), "Data-dependent branching")
    first_t, second_t = typed_sites(first, second)
    new, gone = diff_graph_break_sites(typed_sites(first), [first_t, second_t])
    assert new == [second_t] and gone == []
    legacy = typed_sites(site("model.py", 45, "print"))  # from before causes were recorded
    assert diff_graph_break_sites(legacy, [first_t, second_t]) == ([], [])


def test_more_fallbacks_to_eager_is_a_regression():
    report = compare(variant(fallbacks=0), variant(fallbacks=2))
    assert only(report, "fallbacks_to_eager").verdict == "regression"


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        ("pass", "fail", "regression"),
        ("fail", "pass", "improvement"),
        ("fail", "fail", "pass"),
        ("pass", "skipped", "missing"),
        ("pass", "error", "missing"),
        ("skipped", "fail", "missing"),
        ("error", "pass", "missing"),
    ],
)
def test_numerics_pass_to_fail(before, after, verdict):
    cur = variant(numerics=after, failed_tensors=["grad:head.weight"] if after == "fail" else [])
    row = only(compare(variant(numerics=before), cur), "numerics")
    assert row.verdict == verdict
    if verdict == "regression":
        assert "pass → fail" in row_message(row) and "grad:head.weight" in row_message(row)


@pytest.mark.parametrize(
    ("cur_bytes", "verdict"),
    [(2_300_000_000, "regression"), (2_100_000_000, "pass"), (1_500_000_000, "improvement")],
)
def test_peak_memory_growth_is_bad(cur_bytes, verdict):
    row = only(
        compare(variant(peak_bytes=2_000_000_000), variant(peak_bytes=cur_bytes)), "peak_bytes"
    )
    assert row.verdict == verdict


def test_peak_memory_not_measured_on_either_side_is_skipped():
    report = compare(variant(peak_bytes=None), variant(peak_bytes=None))
    assert not report.rows(metric="peak_bytes")


def test_metric_measured_in_baseline_only_is_missing_and_fails():
    report = compare(variant(compile_s=10.0), variant(compile_s=None))
    row = only(report, "compile_s")
    assert row.verdict == "missing"
    assert "not measured in this run" in row_message(row)
    assert report.exit_code == EXIT_NOT_JUDGED


def test_metric_missing_from_the_baseline_is_a_failing_row_not_a_silent_gap():
    report = compare(variant(compile_s=None), variant(compile_s=10.0))
    row = only(report, "compile_s")
    assert row.verdict == "missing" and "not in the baseline" in row_message(row)
    assert report.exit_code == EXIT_NOT_JUDGED


# -- thresholds -------------------------------------------------------------------------------


def test_per_step_threshold_from_the_baseline_settings_is_used():
    base = step(thresholds={"speedup_drop_pct": 15})
    report = compare(base_step=base, cur_variant=variant(speedup=1.10))
    row = only(report, "speedup")
    assert (row.verdict, row.threshold) == ("pass", 15.0)


def test_this_runs_own_thresholds_never_loosen_the_gate_and_are_shown():
    cur = step(variants=[variant(speedup=1.10)], thresholds={"speedup_drop_pct": 15})
    report = compare(cur_step=cur)
    row = only(report, "speedup")
    assert (row.verdict, row.threshold) == ("regression", 5.0)
    assert any("speedup_drop_pct 15 (applied: 5)" in note for note in map(note_words, report.notes))


def test_global_override_wins_over_the_step_settings():
    base = step(thresholds={"speedup_drop_pct": 15})
    cur = step(variants=[variant(speedup=1.10)])
    report = compare(base_step=base, cur_step=cur, thresholds_override={"speedup_drop_pct": 5})
    row = only(report, "speedup")
    assert (row.verdict, row.threshold) == ("regression", 5.0)
    assert any("on the command line" in note for note in map(note_words, report.notes))


def test_count_threshold_allows_an_increase():
    report = compare(
        variant(), variant(recompiles=2), thresholds_override={"recompiles_increase": 2}
    )
    assert only(report, "recompiles").verdict == "pass"


def test_thresholds_fall_back_to_defaults_without_settings():
    thresholds = resolve_thresholds(None)
    assert thresholds["compile_time_growth_pct"] == 25.0
    assert thresholds["speedup_drop_pct"] == 5.0


@pytest.mark.parametrize("override", [{"speedup_drop": 5}, {"speedup_drop_pct": -1}])
def test_bad_override_is_a_usage_error(override):
    with pytest.raises(UsageError) as err:
        compare(thresholds_override=override)
    assert err.value.exit_code == 2


# -- the noise rule ---------------------------------------------------------------------------


def test_combined_noise_is_root_sum_of_squares():
    assert combined_noise_pct(3.0, 4.0) == pytest.approx(5.0)
    assert combined_noise_pct(None, 4.0) == 4.0
    assert combined_noise_pct(None, None) is None


@pytest.mark.parametrize(
    ("worse_by", "noise", "verdict"),
    [
        (10, 3, "regression"),
        (10, 12, "inconclusive"),
        (4, 1, "pass"),
        (-10, 3, "improvement"),
        (-10, 12, "pass"),
        (10, None, "regression"),
        # beyond the noise, but a noise more than twice the threshold cannot decide it
        (52, 30, "inconclusive"),
        (-52, 30, "pass"),
        (52, 10, "regression"),
        # ... unless the change is beyond twice that noise: a head 5.8× slower in paired
        # mode (+477 % at ±20 %) is a regression; the busy runner's +79 % at ±60 % is not
        (477, 20, "regression"),
        (-477, 20, "improvement"),
        (79, 60, "inconclusive"),
    ],
)
def test_classify_speed_change(worse_by, noise, verdict):
    assert classify_speed_change(worse_by, 5.0, noise) == verdict


def test_change_above_threshold_but_inside_noise_is_inconclusive():
    report = compare(variant(speedup=1.25, noise_pct=8.0), variant(speedup=1.125, noise_pct=8.0))
    row = only(report, "speedup")
    assert row.verdict == "inconclusive"
    assert row.noise_pct == pytest.approx(math.sqrt(2) * 8.0)
    assert "these runs decide changes above 22.6 %" in row_message(row)  # noise > 2 × 5 %
    assert row.detectable_change_pct == pytest.approx(2 * math.sqrt(2) * 8.0)
    assert report.overall == "inconclusive" and report.exit_code == EXIT_OK


def test_change_above_threshold_and_noise_is_a_regression():
    report = compare(variant(speedup=1.25, noise_pct=3.0), variant(speedup=1.0, noise_pct=3.0))
    assert only(report, "speedup").verdict == "regression"
    assert report.exit_code == EXIT_REGRESSION


def test_a_row_too_noisy_to_decide_its_threshold_is_inconclusive_and_passes_the_job():
    """A same-commit rerun on a busy runner: −20 % speedup, beyond the ±14 % noise of both
    runs, but that noise is more than twice the 5 % threshold — these runs cannot decide
    it. Inconclusive, exit 0, and the noise cell says so (never ❌ beside "too noisy")."""
    from compilegate.gate.run_set import VersionOutcome
    from compilegate.report.row_cells import row_cells
    from compilegate.report.row_words import worded_row

    report = compare(variant(speedup=1.25, noise_pct=10.0), variant(speedup=1.0, noise_pct=10.0))
    row = only(report, "speedup")
    assert row.change == pytest.approx(-20.0) and row.noise_pct == pytest.approx(14.14, 0.01)
    assert row.verdict == "inconclusive"
    assert "too noisy to decide it" in row_message(row)
    assert report.exit_code == EXIT_OK
    cells = row_cells(
        VersionOutcome("torch", "result.json", verdict=report), row, worded_row(row), False
    )
    assert "too noisy" in cells[-1] and "❌" not in cells[1]


def test_a_change_beyond_twice_a_wide_noise_is_decided_and_not_called_too_noisy():
    """−80 % speedup at ±14 %: the noise is wider than twice the 5 % threshold, but the
    machine cannot explain a change over twice it. A regression, and its noise cell does not
    say "too noisy" beside the ❌."""
    from compilegate.gate.run_set import VersionOutcome
    from compilegate.report.row_cells import row_cells
    from compilegate.report.row_words import worded_row

    report = compare(variant(speedup=1.25, noise_pct=10.0), variant(speedup=0.25, noise_pct=10.0))
    row = only(report, "speedup")
    assert row.verdict == "regression" and report.exit_code == EXIT_REGRESSION
    cells = row_cells(
        VersionOutcome("torch", "result.json", verdict=report), row, worded_row(row), False
    )
    assert "too noisy" not in cells[-1]


def test_speedup_confidence_interval_counts_as_noise():
    base = variant(speedup=1.25, noise_pct=1.0, speedup_half_width_pct=9.0)
    cur = variant(speedup=1.125, noise_pct=1.0, speedup_half_width_pct=9.0)
    assert only(compare(base, cur), "speedup").verdict == "inconclusive"


def test_round_to_round_drift_counts_as_noise_for_absolute_times():
    base = step(eager_ms=10.0, eager_noise_pct=0.5, eager_spread_pct=8.0)
    cur = step(eager_ms=10.8, eager_noise_pct=0.5, eager_spread_pct=8.0)
    row = only(compare(base_step=base, cur_step=cur), "eager_step_ms", "eager")
    assert row.noise_pct == pytest.approx((8.0**2 + 8.0**2) ** 0.5, rel=0.01)
    assert not row.gated
    parsed = parse(result(cur), "result.json").steps[0].eager
    assert parsed is not None
    assert round_spread_pct(parsed.step_ms) == pytest.approx(8.0)


def test_no_noise_measured_falls_back_to_threshold_and_says_so():
    base = step(variants=[variant(noise_pct=None, speedup_half_width_pct=0)], eager_noise_pct=None)
    cur = step(
        variants=[variant(speedup=1.10, noise_pct=None, speedup_half_width_pct=0)],
        eager_noise_pct=None,
    )
    row = only(compare(base_step=base, cur_step=cur), "speedup")
    assert row.verdict == "regression"
    assert row.noise_pct is None
    assert "judged on the threshold alone" in row_message(row)


def test_noise_missing_on_one_side_is_stated():
    base = step(variants=[variant(noise_pct=None, speedup_half_width_pct=0)])
    row = only(compare(base_step=base, cur_variant=variant(speedup=1.10)), "speedup")
    assert "no noise measured in the baseline" in row_message(row)


def test_improvement_inside_the_noise_is_not_claimed():
    report = compare(variant(speedup=1.25, noise_pct=8.0), variant(speedup=1.375, noise_pct=8.0))
    row = only(report, "speedup")  # +10 %: beyond the 5 % threshold, inside ±11.3 % noise
    assert row.verdict == "pass" and "not a clear improvement" in row_message(row)


# -- new / removed / error --------------------------------------------------------------------


def test_new_and_removed_steps():
    baseline = result(step("old"), step("kept"))
    current = result(step("kept"), step("fresh"))
    report = judge_documents(baseline, current)
    assert report.rows(verdict="removed")[0].step == "old"
    assert {r.step for r in report.rows(verdict="new")} == {"fresh"}
    assert report.overall == "removed" and report.exit_code == EXIT_NOT_JUDGED


def test_a_new_step_alone_passes():
    report = judge_documents(result(step("kept")), result(step("kept"), step("fresh")))
    assert report.overall == "pass" and report.exit_code == EXIT_OK


def test_a_step_left_out_with_step_flag_is_skipped_not_removed():
    baseline = result(step("a"), step("b"))
    current = result(step("a"), declared_steps=["a", "b"])
    report = judge_documents(baseline, current)
    assert only(report, "step", None).verdict == "skipped"
    assert "--step" in row_message(only(report, "step", None))
    assert report.exit_code == EXIT_OK


def test_new_and_removed_variants_when_only_the_variant_list_changed():
    base = step(variants=[variant("a"), variant("b")], fingerprint="fp-ab")
    cur = step(variants=[variant("a"), variant("c", speedup=1.5)], fingerprint="fp-ac")
    report = compare(base_step=base, cur_step=cur)
    assert only(report, "speedup", "c").verdict == "new"
    assert only(report, "speedup", "c").current == 1.5
    assert only(report, "variant", "b").verdict == "removed"
    assert only(report, "speedup", "a").verdict == "pass"
    assert report.exit_code == EXIT_NOT_JUDGED


def test_everything_new_against_an_empty_baseline():
    report = judge_documents(result(step("x")) | {"steps": []}, result(step("x")))
    assert report.overall == "new" and report.exit_code == EXIT_OK


def test_failed_step_is_an_error_verdict_and_exit_3():
    cur = step(status="error", error="eager: CUDA out of memory", variants=[])
    report = compare(cur_step=cur)
    assert [(r.metric, r.verdict) for r in report.verdicts] == [("step", "error")]
    assert "CUDA out of memory" in row_message(report.verdicts[0])
    assert report.overall == "error" and report.exit_code == EXIT_RUN_ERROR


def test_failed_variant_is_an_error_verdict():
    cur = step(variants=[variant(status="error", error="timed out after 600 s")])
    report = compare(cur_step=cur)
    assert only(report, "variant").verdict == "error"
    assert report.exit_code == EXIT_RUN_ERROR


def test_regression_outranks_an_error_elsewhere():
    baseline = result(step("a"), step("b"))
    current = result(
        step("a", variants=[variant(speedup=1.0)]),
        step("b", variants=[variant(status="error", error="boom")]),
    )
    report = judge_documents(baseline, current)
    assert report.overall == "regression" and report.exit_code == EXIT_REGRESSION
    assert report.counts()["error"] == 1


def test_failed_baseline_step_means_nothing_to_judge_against():
    base = step(status="error", error="boom", variants=[])
    report = compare(base_step=base)
    assert {r.verdict for r in report.verdicts} == {"incomparable"}
    assert "baseline run of this step failed (boom)" in row_message(report.verdicts[0])
    assert report.exit_code == EXIT_NOT_JUDGED


def test_failed_baseline_variant_is_not_new():
    base = step(variants=[variant(status="error", error="timed out")])
    row = only(compare(base_step=base), "variant")
    assert row.verdict == "incomparable"
    assert "baseline run of this variant failed (timed out)" in row_message(row)


# -- environment guard ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected", "judged"),
    [
        (
            {"gpu_name": "NVIDIA A100-SXM4-80GB"},
            "NVIDIA A100-SXM4-80GB ×1; this run: NVIDIA H200 ×1",
            ["compile_work", "recompiles", "graph_break_sites", "fallbacks_to_eager", "numerics"],
        ),
        (
            {"device": "cpu", "gpu_name": None},
            "CPU Intel(R) Xeon(R) Platinum 8480+ (16 cores); this run: NVIDIA H200 ×1",
            ["recompiles", "graph_break_sites", "fallbacks_to_eager", "numerics"],
        ),
    ],
)
def test_another_hardware_class_is_judged_only_on_what_hardware_does_not_move(
    env, expected, judged
):
    """A speedup halved on another class is not judged (exit 4, one row per step saying
    so with both classes); what hardware does not move is, and a new graph break fails."""
    baseline = result(step("a"), step("b"), env=environment(**env))
    current = result(step("a", variants=[variant(speedup=0.5)]), step("b"))
    report = judge_documents(baseline, current)
    for name in ("a", "b"):
        rows = [r for r in report.verdicts if r.step == name]
        assert [r.metric for r in rows] == [*judged, "step"]
        assert [r.verdict for r in rows] == ["pass"] * len(judged) + ["incomparable"]
        assert expected in row_message(rows[-1])
        assert row_message(rows[-1]).startswith("not judged against another hardware class")
    assert report.overall == "incomparable" and report.exit_code == EXIT_NOT_JUDGED
    assert any(
        note.startswith(f"baseline from another hardware class ({expected})")
        for note in map(note_words, report.notes)
    )
    broken = variant(sites=[site("model.py", 42, "print() in forward")])
    report = judge_documents(baseline, result(step("a", variants=[broken]), step("b")))
    assert report.exit_code == EXIT_REGRESSION
    (row,) = [r for r in report.verdicts if r.verdict == "regression"]
    assert row.metric == "graph_break_sites" and "model.py:42" in row_message(row)


def test_changed_step_configuration_is_incomparable_for_that_step():
    baseline = result(step("a", fingerprint="fp-1"), step("b"))
    changed = step("a", fingerprint="fp-2", settings={"warmup": 10})
    report = judge_documents(baseline, result(changed, step("b")))
    rows_a = [r for r in report.verdicts if r.step == "a"]
    assert [r.verdict for r in rows_a] == ["incomparable"]
    assert "warmup 5 → 10" in row_message(rows_a[0])
    assert all(r.verdict == "pass" for r in report.verdicts if r.step == "b")


def test_changed_entry_is_incomparable():
    cur = step(fingerprint="fp-2", entry="other.py:make_step")
    report = compare(cur_step=cur)
    assert (
        "entry" in row_message(report.verdicts[0]) and report.verdicts[0].verdict == "incomparable"
    )


def test_changed_variant_definition_is_incomparable():
    cur = step(variants=[variant(mode="max-autotune")], fingerprint="fp-2")
    row = only(compare(cur_step=cur), "variant")
    assert row.verdict == "incomparable" and "mode 'default' → 'max-autotune'" in row_message(row)


def test_model_code_change_stays_comparable():
    # Same configuration (fingerprint), different numbers: exactly what the gate compares.
    report = compare(variant(speedup=1.25), variant(speedup=1.0))
    assert report.overall == "regression"


def test_torch_upgrade_stays_comparable_and_names_both_versions():
    baseline = result(env=environment(torch="2.9.1"))
    current = result(step(variants=[variant(speedup=1.0)]), env=environment(torch="2.10.0"))
    report = judge_documents(baseline, current)
    assert report.overall == "regression"
    assert any("2.9.1" in note and "2.10.0" in note for note in map(note_words, report.notes))
    assert (report.baseline.torch, report.current.torch) == ("2.9.1", "2.10.0")


def test_report_to_dict_carries_overall_counts_and_rows():
    from compilegate.report.verdict_json import verdict_json

    report = compare(variant(), variant(speedup=1.0))
    assert "message" not in report.to_dict()["verdicts"][0]  # the gate's values, no words
    data = verdict_json(report)
    assert data["overall"] == "regression" and data["exit_code"] == 1
    assert data["counts"]["regression"] == 1
    speedup = next(v for v in data["verdicts"] if v["metric"] == "speedup")
    assert set(speedup) >= {
        "step",
        "variant",
        "metric",
        "verdict",
        "direction",
        "baseline",
        "current",
        "change",
        "threshold",
        "noise_pct",
        "message",
        "facts",
    }
    assert speedup["facts"]["kind"] == "speed" and speedup["message"].startswith("speedup 1.25x")


def test_drift_between_child_processes_counts_as_noise_for_absolute_times():
    """Eager moved 12 % between the run's own processes: that is the run's noise."""
    base = step(eager_ms=10.0, eager_noise_pct=0.5)
    cur = step(eager_ms=11.0, eager_noise_pct=0.5)
    quiet = only(compare(base_step=base, cur_step=cur), "eager_step_ms", "eager")
    cur["process_noise_pct"] = 12.0
    drifting = only(compare(base_step=base, cur_step=cur), "eager_step_ms", "eager")
    assert quiet.noise_pct < 1 and drifting.noise_pct == pytest.approx(12.0, abs=0.1)
    assert not quiet.gated and not drifting.gated  # one stored run: reported (issue 28)


def _with_yardstick(doc_step, eager_per_yardstick, compiled_per_yardstick, half_width_pct=1.0):
    doc_step["eager"]["per_yardstick"] = ratio(eager_per_yardstick, half_width_pct)
    for v in doc_step["variants"]:
        v["compiled_per_yardstick"] = ratio(compiled_per_yardstick, half_width_pct)
    return doc_step


def test_a_slower_machine_is_not_a_slower_step_when_the_yardstick_moved_too():
    """Raw times +30 %, but the yardstick timed beside them slowed down just as much."""
    base = _with_yardstick(step(eager_ms=10.0, variants=[variant(step_ms=8.0)]), 4.0, 3.2)
    cur = _with_yardstick(step(eager_ms=13.0, variants=[variant(step_ms=10.4)]), 4.0, 3.2)
    report = compare(base_step=base, cur_step=cur)
    eager_row = only(report, "eager_step_ms", "eager")
    assert eager_row.verdict == "pass"
    assert "against the machine yardstick" in row_message(eager_row) and "raw +30.0 %" in (
        row_message(eager_row)
    )
    assert only(report, "compiled_step_ms").verdict == "pass"


def test_a_slower_step_on_an_unchanged_machine_is_a_regression():
    base = _with_yardstick(step(eager_ms=10.0, variants=[variant(step_ms=8.0)]), 4.0, 3.2)
    cur = _with_yardstick(step(eager_ms=10.0, variants=[variant(step_ms=8.0)]), 4.6, 3.2)
    report = compare(base_step=base, cur_step=cur)
    eager = only(report, "eager_step_ms", "eager")
    assert eager.change == pytest.approx(15.0) and eager.normalisation == "yardstick"
    assert not eager.gated, "one stored run: reported, not judged (issue 28)"
    assert abs(only(report, "compiled_step_ms").change) < 1e-9


def test_process_to_process_noise_widens_step_time_judgement_in_yardstick_units():
    base = _with_yardstick(step(eager_ms=10.0, variants=[variant(step_ms=8.0)]), 4.0, 3.2)
    cur = _with_yardstick(step(eager_ms=10.0, variants=[variant(step_ms=8.0)]), 4.6, 3.2)
    cur["process_noise_pct"] = 20.0
    row = only(compare(base_step=base, cur_step=cur), "eager_step_ms", "eager")
    assert row.noise_pct == pytest.approx(20.0, abs=0.1) and not row.gated


@dataclass(frozen=True)
class AnswerFacts(RowFactsBase):
    """What test_a_new_metric_is_one_new_judge's judge found."""

    kind: ClassVar[str] = "answer"
    answer: int
    variant: str


def test_a_new_metric_is_one_new_judge(monkeypatch):
    """The extension point: a judge sees both sides and the baseline's policy once per
    variant, and its rows join the report, worded by its family's words in report/."""
    from compilegate.gate import compare as compare_module
    from compilegate.report import row_words
    from compilegate.report.row_words.worded import words_only

    seen = []

    def judge_answer(sides):
        seen.append((sides.subject.variant, sides.policy.thresholds["speedup_drop_pct"]))
        return [sides.subject.row("answer", "pass", facts=AnswerFacts(42, sides.head.id))]

    judges = (*compare_module.VARIANT_JUDGES, judge_answer)
    monkeypatch.setattr(compare_module, "VARIANT_JUDGES", judges)
    judged = row_words.by_family

    def words(row):
        if isinstance(row.facts, AnswerFacts):
            return words_only(f"{row.facts.answer} for {row.facts.variant}")
        return judged(row)

    monkeypatch.setattr(row_words, "by_family", words)
    report = compare(base_step=step(variants=[variant()], thresholds={"speedup_drop_pct": 7}))
    assert seen == [("default", 7.0)]
    assert row_message(only(report, "answer")) == "42 for default"


def test_a_drop_is_as_large_as_its_log_against_twice_the_noise() -> None:
    """Issue 39: a speedup 1.7x → 0.13x is −92 %, a 12.5x change; held in percent against
    twice a ±85 % noise it read "too noisy to decide". Beyond the noise itself a drop is
    still read in percent (the H200's same-commit −9.1 % at ±9.3 % stays inconclusive)."""
    from compilegate.gate.rules import classify_speed_change, ratio_size_pct

    assert ratio_size_pct(-92.0) == pytest.approx(1150.0)
    assert ratio_size_pct(50.0) == pytest.approx(50.0)
    assert classify_speed_change(92.0, 5.0, 85.0) == "inconclusive"
    assert classify_speed_change(92.0, 5.0, 85.0, size_pct=ratio_size_pct(-92.0)) == "regression"
    same_commit = classify_speed_change(9.1, 5.0, 9.3, size_pct=ratio_size_pct(-9.1))
    assert same_commit == "inconclusive"
