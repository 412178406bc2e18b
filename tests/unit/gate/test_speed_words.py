"""A speed row's words from its facts (report/row_words/speed.py), for the branches the golden
verdicts do not reach: each expected sentence is the one the speed judges wrote themselves
before their words moved to report/."""

from __future__ import annotations

import dataclasses
from typing import Any

from compilegate.gate.judges.speed_facts import (
    Disturbed,
    HistoryFacts,
    NotJudged,
    RawBecause,
    SpeedFacts,
    Statistic,
    Ungated,
)
from compilegate.gate.rules import Side
from compilegate.gate.verdict import Acceptance, MetricVerdict, Verdict
from compilegate.report.row_words import row_message
from compilegate.report.row_words.speed import (
    compares_fastest_iterations,
    not_judged_reason,
    not_judged_why,
    raw_ms_as_said,
)
from compilegate.results.processes import GPU_BOUND, LAUNCH_BOUND


def _row(facts: SpeedFacts, **fields: Any) -> MetricVerdict:
    base: dict[str, Any] = dict(
        step="gpt",
        variant="default",
        metric="compiled_step_ms",
        verdict=facts.rule_verdict,
        unit="ms",
        baseline=10.0,
        current=13.0,
        change=30.0,
        change_unit="pct",
        threshold=5.0,
        noise_pct=4.0,
        facts=facts,
    )
    return MetricVerdict(**{**base, **fields})


def test_a_step_time_beyond_the_gross_bound_fails_against_one_stored_run() -> None:
    facts = SpeedFacts(
        Statistic.FASTEST,
        Verdict.REGRESSION,
        processes=(4, 4),
        raw_because=RawBecause.YARDSTICK_NOT_TIMED,
        gross_bound_pct=25.0,
    )
    assert row_message(_row(facts, threshold=25.0)) == (
        "compiled step time 10.00 ms → 13.00 ms (+30.0 %; fastest iterations, 4 processes → 4, "
        "raw milliseconds (a run did not time the yardstick)): worse by more than the 25 % "
        "threshold and the ±4.0 % noise between the processes of both runs; against one stored "
        "run a step time fails only beyond the 25 % that whole runs of one machine were "
        "measured to drift apart (step_time_gross_growth_pct)"
    )


def test_a_paired_inconclusive_speedup_names_its_pairs_and_what_decides_it() -> None:
    facts = SpeedFacts(Statistic.FASTEST, Verdict.INCONCLUSIVE, processes=(2, 2), paired=True)
    row = _row(
        facts, metric="speedup", unit="x", baseline=1.5, current=1.35, change=-10.0, noise_pct=12.0
    )
    assert row_message(row) == (
        "speedup 1.50x → 1.35x (-10.0 %; fastest iterations, 2 pairs of processes): beyond the "
        "5 % threshold but inside the ±12.0 % noise of the paired differences (each head process "
        "against the base process beside it): these runs decide changes above 24.0 %; rerun "
        "with more processes (variant_processes) or iterations to decide"
    )
    assert compares_fastest_iterations(row)


def test_an_inconclusive_row_against_a_short_history_asks_for_more_of_its_runs() -> None:
    facts = SpeedFacts(
        Statistic.P25,
        Verdict.INCONCLUSIVE,
        processes=(4, 4),
        yardstick=LAUNCH_BOUND,
        yardstick_spreads_pct=((GPU_BOUND, 3.25), (LAUNCH_BOUND, 0.5)),
        raw_ms=(8.004, 9.6),
        raw_change_pct=19.96,
        history=HistoryFacts(runs=5, spread_pct=4.0, noise_pct=12.0),
    )
    row = _row(
        facts,
        metric="compiled_step_ms_p25",
        unit="yardsticks",
        baseline=4.0,
        current=4.44,
        change=11.0,
        threshold=10.0,
        noise_pct=12.0,
        normalisation="yardstick",
    )
    said = row_message(row)
    assert said.startswith(
        "compiled step time (25th percentile) 4 yardsticks → 4.44 yardsticks (+11.0 %; each "
        "process's 25th percentile, 4 processes → 4, normalised by the launch-bound yardstick "
        "timed beside them (step/yardstick spread across processes: GPU-bound ±3.2 %, "
        "launch-bound ±0.5 %); against the mean of the default branch's last 5 runs, whose "
        "spread (±4.0 % a run) predicts ±12.0 % for one more; raw 8.00 ms → 9.60 ms, +20.0 %): "
        "beyond the 10 % threshold but inside the ±12.0 % noise between the default branch's "
        "last 5 runs: these runs decide changes above 12.0 %"
    )
    assert said.endswith(
        "; to decide it, narrow the default branch's spread, which a rerun of this run leaves "
        "as it is: steadier default-branch runs (more iterations or processes in the base "
        "branch's config), or more of them (the baseline keeps 10, it has 5)"
    )
    assert not compares_fastest_iterations(row)
    assert raw_ms_as_said(row) == (8.0, 9.6, 20.0)


def test_a_step_time_reported_only_says_why_and_which_processes_were_left_out() -> None:
    facts = SpeedFacts(
        Statistic.FASTEST,
        Verdict.REGRESSION,
        processes=(3, 3),
        raw_because=RawBecause.TORCH_VERSIONS,
        torch_versions=("2.9.1", "2.10.0"),
        not_judged=Ungated(NotJudged.UNSTEADY_BASELINE, 1, 5),
        disturbed=(Disturbed(Side.BASELINE, 3.24), Disturbed(Side.RUN, 2.5)),
    )
    row = _row(facts, verdict=Verdict.PASS, gated=False)
    why = (
        "the baseline's step times were measured on an unsteady machine (its run health when "
        "baseline update recorded it) and are not vouched for; they are judged once a steady "
        "run of baseline update replaces them, or its history holds 5 steady runs, or now in "
        "paired mode (run --against); 2 disturbed processes left out (baseline's eager twins "
        "x3.2 apart, this run's eager twins x2.5 apart: more than x2, a load spike inside the "
        "process)"
    )
    assert row_message(row) == (
        "compiled step time 10.00 ms → 13.00 ms (+30.0 %; fastest iterations, 3 processes → 3, "
        "raw milliseconds (torch 2.9.1 → 2.10.0: the yardstick runs on torch, so it is not a "
        f"fixed unit across versions)); reported, not judged: {why}"
    )
    assert not_judged_why(row) == why
    assert not_judged_reason(row) is NotJudged.UNSTEADY_BASELINE
    judged = dataclasses.replace(row, facts=dataclasses.replace(facts, not_judged=None))
    assert not_judged_why(judged) is None and not_judged_reason(judged) is None


def test_medians_without_noise_are_judged_on_the_threshold_alone() -> None:
    facts = SpeedFacts(
        Statistic.MEDIAN, Verdict.REGRESSION, noise_unmeasured=(Side.BASELINE, Side.RUN)
    )
    assert row_message(_row(facts, noise_pct=None)) == (
        "compiled step time 10.00 ms → 13.00 ms (+30.0 %): worse by more than the 5 % threshold "
        "(no noise measured in either run: judged on the threshold alone)"
    )


def test_medians_per_yardstick_name_the_raw_change_and_the_run_without_noise() -> None:
    facts = SpeedFacts(
        Statistic.MEDIAN, Verdict.IMPROVEMENT, raw_change_pct=-25.04, noise_unmeasured=(Side.RUN,)
    )
    row = _row(facts, current=7.5, change=-20.0, normalisation="yardstick")
    assert row_message(row) == (
        "compiled step time 10.00 ms → 7.50 ms (-20.0 %); -20.0 % against the machine yardstick "
        "timed beside it (raw -25.0 %): better by more than the 5 % threshold and the ±4.0 % "
        "noise of both runs (no noise measured in this run)"
    )
    assert raw_ms_as_said(row) is None  # a median row's values are its milliseconds


def test_medians_too_noisy_to_decide_say_so_and_name_the_torch_versions() -> None:
    facts = SpeedFacts(
        Statistic.MEDIAN,
        Verdict.INCONCLUSIVE,
        raw_because=RawBecause.TORCH_VERSIONS,
        torch_versions=("2.9.1", "2.10.0"),
    )
    row = _row(facts, metric="eager_step_ms", variant="eager", noise_pct=14.0)
    assert row_message(row) == (
        "eager step time 10.00 ms → 13.00 ms (+30.0 %): beyond the 5 % threshold, but the "
        "±14.0 % noise of both runs is more than twice the threshold: too noisy to decide it; "
        "with this noise a change is decided only beyond 28 %, twice the noise; rerun with more "
        "iterations or rounds (raw milliseconds: torch 2.9.1 → 2.10.0: the yardstick runs on "
        "torch, so it is not a fixed unit across versions)"
    )
    assert not compares_fastest_iterations(row)


def test_an_accepted_row_says_who_accepted_it() -> None:
    facts = SpeedFacts(Statistic.FASTEST, Verdict.REGRESSION, processes=(4, 4))
    row = _row(
        facts,
        metric="speedup",
        unit="x",
        baseline=1.5,
        current=1.2,
        change=-20.0,
        verdict=Verdict.ACCEPTED,
        accepted_by=Acceptance("compilegate: accept", "maintainer", "abc1234"),
    )
    assert row_message(row).endswith(
        'noise between the processes of both runs; accepted by @maintainer (label "compilegate: '
        'accept") at abc1234'
    )


def test_the_milliseconds_are_read_as_the_sentence_rounds_them() -> None:
    facts = SpeedFacts(
        Statistic.FASTEST,
        Verdict.PASS,
        processes=(4, 4),
        raw_ms=(0.123456, 1.005001),
        raw_change_pct=-0.04,
    )
    row = _row(facts, unit="yardsticks", normalisation="yardstick")
    assert "raw 0.123 ms → 1.01 ms, -0.0 %" in row_message(row)
    assert raw_ms_as_said(row) == (0.123, 1.01, -0.0)
