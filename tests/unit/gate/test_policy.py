"""The gate's policy: thresholds from the baseline side, what is comparable, what fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_docs import (
    environment,
    judge_documents,
    process,
    result,
    step,
    variant,
    with_history,
    with_processes,
)

from compilegate.config.loading import load_config_text
from compilegate.errors import EXIT_CODES, EXIT_NOT_JUDGED, EXIT_OK, EXIT_USAGE, BaselineError
from compilegate.gate.comparability import Mismatch
from compilegate.gate.policy import (
    adopt_baseline_power,
    environment_mismatch,
    environment_notes,
    resolve_thresholds,
    step_config_mismatch,
)
from compilegate.gate.verdict import OVERALL_ORDER, VERDICT_EXIT_CODES, VERDICTS
from compilegate.report.note_words import adopted_power_words, note_words
from compilegate.report.row_words import row_message
from compilegate.report.row_words.comparability import (
    config_change_words,
    environment_mismatch_words,
)
from compilegate.results.model import environment_of, parse, step_of
from repo_helpers import REPO_ROOT


def env(raw):
    """A JSON-shaped environment, typed as the gate reads it."""
    return environment_of(raw)


def env_mismatch(base: dict, cur: dict) -> str | None:
    """Why the gate does not compare these two JSON-shaped environments, in the report's
    words; None when it does."""
    found = environment_mismatch(env(base), env(cur))
    return environment_mismatch_words(found) if found is not None else None


def env_notes(base: dict, cur: dict) -> list[str]:
    return [note_words(note) for note in environment_notes(env(base), env(cur))]


CPU = {"device": "cpu", "gpu_name": None, "driver": None, "cuda": None}


def rows(report, verdict=None):
    return [r for r in report.verdicts if verdict is None or r.verdict == verdict]


# -- which verdict fails the job ---------------------------------------------------------------


def test_every_verdict_has_one_documented_exit_code():
    assert set(VERDICT_EXIT_CODES) == set(VERDICTS)
    assert set(VERDICT_EXIT_CODES.values()) <= set(EXIT_CODES)
    failing = {v for v, code in VERDICT_EXIT_CODES.items() if code != EXIT_OK}
    assert failing == {"regression", "error", "missing", "removed", "incomparable"}
    assert set(OVERALL_ORDER) >= failing  # a failing verdict always decides the overall one


@pytest.mark.parametrize(
    ("verdicts", "overall"),
    [
        (["pass", "missing", "regression"], "regression"),
        (["missing", "error"], "error"),
        (["inconclusive", "removed"], "removed"),
        (["improvement", "inconclusive"], "inconclusive"),
        (["new", "new"], "new"),
        (["skipped", "pass"], "pass"),
    ],
)
def test_the_overall_verdict_is_the_most_severe(verdicts, overall):
    from said_rows import said_row

    from compilegate.gate.verdict import EnvironmentSummary, VerdictReport

    report = VerdictReport(
        tuple(said_row("m", v, step="s", variant=str(i)) for i, v in enumerate(verdicts)),
        EnvironmentSummary(),
        EnvironmentSummary(),
    )
    assert report.overall == overall
    assert report.exit_code == VERDICT_EXIT_CODES[overall]


# -- thresholds from the baseline side ---------------------------------------------------------


def test_thresholds_are_the_baselines_whatever_the_result_says():
    base = step(thresholds={"speedup_drop_pct": 3})
    cur = step(thresholds={"speedup_drop_pct": 1000, "compile_time_growth_pct": 1000})
    settings = base["settings"]
    assert resolve_thresholds(settings)["speedup_drop_pct"] == 3.0
    assert resolve_thresholds(settings)["compile_time_growth_pct"] == 25.0
    assert resolve_thresholds(settings, {"speedup_drop_pct": 8.0})["speedup_drop_pct"] == 8.0
    report = judge_documents(result(base), result(cur))
    assert any(
        "speedup_drop_pct 1000 (applied: 3), compile_time_growth_pct 1000 (applied: 25)" in note
        for note in map(note_words, report.notes)
    )


def test_a_baseline_threshold_that_is_not_a_number_falls_back_to_the_default():
    base = step()
    base["settings"]["thresholds"]["speedup_drop_pct"] = "lots"
    assert resolve_thresholds(base["settings"])["speedup_drop_pct"] == 5.0


def mismatch(base: dict, cur: dict) -> str | None:
    """step_config_mismatch on two JSON-shaped steps, each typed at the door, in the
    report's words."""
    change = step_config_mismatch(step_of(base), step_of(cur))
    return config_change_words(change) if change is not None else None


# -- comparable settings -----------------------------------------------------------------------


def test_settings_are_compared_even_without_fingerprints():
    base = step(fingerprint=None)
    cur = step(fingerprint=None, settings={"iterations": 4})
    assert "iterations 40 → 4" in mismatch(base, cur)


def test_a_result_that_does_not_record_its_settings_is_incomparable():
    cur = step()
    del cur["settings"]
    why = mismatch(step(), cur)
    assert why and "warmup 5 → (not recorded)" in why


def test_a_changed_numerics_tolerance_is_incomparable_naming_both():
    cur = step(settings={"numerics": {"enabled": True, "steps": 2, "tol": 1.0, "cosine_min": 0.0}})
    report = judge_documents(result(step()), result(cur))
    (row,) = rows(report)
    assert row.verdict == "incomparable" and report.exit_code == EXIT_NOT_JUDGED
    assert "'tol': 0.0001" in row_message(row) and "'tol': 1.0" in row_message(row)


# -- the gate's power comes from the baseline ----------------------------------------------------

WIDE = (0.88, 1.12, 0.92, 1.08)  # processes that disagree by ±12 %


def timed_step(compiled_ms: float, processes: int, **settings: int) -> dict:
    """A step whose variant was timed in `processes` processes, recording that setting."""
    doc = step(variants=[variant(step_ms=compiled_ms)], settings=settings or None)
    doc["settings"]["variant_processes"] = processes
    records = [process([10.0] * 30, [compiled_ms * s] * 30) for s in WIDE[:processes]]
    return with_processes(doc, [process([10.0] * 30)], [records])


def test_a_pr_that_times_its_variant_in_one_process_cannot_turn_a_regression_into_a_pass():
    """Issue 14 item 2: +24 % in the compiled step gave REGRESSION at the default four
    processes and INCONCLUSIVE (exit 0) when the pull request's config said
    `variant_processes: 1`: one process leaves the noise to the baseline's spread alone."""
    base = with_history(timed_step(8.0, 4))
    assert judge_documents(result(base), result(timed_step(8.0 * 1.24, 4))).exit_code == 1
    report = judge_documents(result(base), result(timed_step(8.0 * 1.24, 1)))
    assert report.exit_code == EXIT_NOT_JUDGED, [(r.metric, r.verdict) for r in report.verdicts]
    (row,) = rows(report)
    assert row.verdict == "incomparable"
    assert "variant_processes 4 → 1" in row_message(row) and "power" in row_message(row)


@pytest.mark.parametrize("key", ["eager_processes", "variant_processes"])
def test_more_processes_than_the_baseline_stay_comparable(key):
    cur = step()
    cur["settings"][key] += 2
    assert mismatch(step(), cur) is None
    cur["settings"][key] = 0
    assert f"{key} " in mismatch(step(), cur)


def test_a_baseline_that_predates_the_process_settings_sets_no_floor():
    base = step()
    del base["settings"]["variant_processes"], base["settings"]["eager_processes"]
    assert mismatch(base, step(settings={"variant_processes": 1})) is None


def test_a_result_that_hides_its_process_count_is_incomparable():
    cur = step()
    del cur["settings"]["variant_processes"]
    assert "variant_processes 4 → (not recorded)" in mismatch(step(), cur)


POWERLESS_CONFIG = """\
version: 1
steps:
  - name: train
    entry: examples/test_steps/tiny_mlp.py:make_step
    iterations: 10
    rounds: 2
    variant_processes: 1
    eager_processes: 3
  - name: other
    entry: examples/test_steps/tiny_mlp.py:make_step
"""


def test_run_with_a_baseline_measures_with_the_baselines_power(repo_root: Path):
    """`compilegate run --baseline` does not let its config lower the gate's power: it
    measures with the baseline's iterations, rounds and process counts, and says so."""
    config = load_config_text(POWERLESS_CONFIG, source="compilegate.yml", repo_root=repo_root)
    baseline = result(step())  # step "train": warmup 5, 40 iterations, 4 rounds, 1 + 4 processes
    adopted, notes = adopt_baseline_power(config, parse(baseline, "b.json", "baseline"))
    train, other = adopted.steps
    assert (train.warmup, train.iterations, train.rounds) == (5, 40, 4)
    assert (train.variant_processes, train.eager_processes) == (4, 3)  # more is kept
    assert other == config.steps[1]  # not in the baseline: nothing to hold it to
    (note,) = map(adopted_power_words, notes)
    assert "step train: measured with the baseline's" in note
    assert "iterations 40 (config: 10)" in note and "variant_processes 4 (config: 1)" in note
    measured = step(settings=train.comparable_settings() | {"variant_processes": 4})
    assert mismatch(step(), measured) is None


# -- the machine -------------------------------------------------------------------------------


def test_another_cpu_model_is_not_compared_on_cpu():
    base = environment(**CPU, cpu_model="AMD EPYC 9654")
    cur = environment(**CPU, cpu_model="Intel(R) Xeon(R) Platinum 8480+")
    found = environment_mismatch(env(base), env(cur))
    assert found is not None and found.what is Mismatch.CPU_MODEL
    assert env_mismatch(base, cur) == (
        "the baseline was measured on CPU AMD EPYC 9654, this run on CPU "
        "Intel(R) Xeon(R) Platinum 8480+"
    )
    assert env_mismatch(base, dict(base)) is None


def test_an_unrecorded_cpu_model_cannot_be_matched():
    base = environment(**CPU, cpu_model=None)
    assert env_mismatch(base, environment(**CPU)) == (
        "the baseline does not record its CPU model, so the machines cannot be matched"
    )
    cur = environment(**CPU, cpu_model=None)
    assert env_mismatch(environment(**CPU), cur) == (
        "this run does not record its CPU model, so the machines cannot be matched"
    )


def test_processor_alone_is_not_a_cpu_model():
    # platform.processor() is "x86_64" on every Linux machine: it cannot match machines.
    base = environment(**CPU, cpu_model="AMD EPYC 9654", processor="x86_64")
    cur = environment(**CPU, cpu_model="Intel Xeon", processor="x86_64")
    assert environment_mismatch(env(base), env(cur)) is not None


def test_a_driver_change_is_compared_and_stated():
    base, cur = environment(driver="550.54.15"), environment(driver="570.124.06")
    assert environment_mismatch(env(base), env(cur)) is None
    (note,) = env_notes(base, cur)
    assert note.startswith("NVIDIA driver 550.54.15 (baseline) vs 570.124.06 (this run)")
    report = judge_documents(result(env=base), result(env=cur))
    assert report.exit_code == EXIT_OK and note in map(note_words, report.notes)


def test_another_host_cpu_under_the_same_gpu_is_a_note():
    base, cur = environment(cpu_model="AMD EPYC 9654"), environment()
    assert environment_mismatch(env(base), env(cur)) is None
    assert "host CPU AMD EPYC 9654 (baseline) vs (not recorded) (this run)" in env_notes(
        base, {**cur, "cpu_model": None}
    )


def test_another_gpu_model_stays_incomparable():
    said = env_mismatch(environment(gpu_name="NVIDIA A100"), environment())
    assert said is not None and "NVIDIA A100" in said


# -- measurements that cannot be judged ---------------------------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_speedup_is_never_a_pass(bad):
    """Refused at the door (results/model.parse, exit 2): the gate never compares it."""
    cur = variant()
    cur["speedup"]["median"] = bad
    with pytest.raises(BaselineError, match=r"steps\[0\].variants\[0\].speedup.median: "):
        judge_documents(result(), result(step(variants=[cur])))


def test_failed_diagnostics_are_missing_measurements_that_say_why():
    cur = variant()
    cur.update(
        graph_breaks=None,
        recompiles=None,
        fallbacks_to_eager=None,
        degraded=["compile diagnostics failed: KeyError: 'frames'"],
    )
    report = judge_documents(result(), result(step(variants=[cur])))
    missing = rows(report, "missing")
    assert {r.metric for r in missing} == {"recompiles", "graph_break_sites", "fallbacks_to_eager"}
    assert all(
        "(compile diagnostics failed: KeyError: 'frames')" in row_message(r) for r in missing
    )
    assert report.exit_code == EXIT_NOT_JUDGED


def test_numerics_the_baselines_policy_checks_must_be_checked():
    both_errored = variant(numerics="error")
    report = judge_documents(
        result(step(variants=[both_errored])), result(step(variants=[both_errored]))
    )
    (row,) = [r for r in report.verdicts if r.metric == "numerics"]
    assert row.verdict == "missing"
    off = {"numerics": {"enabled": False, "steps": 2, "tol": 1e-4, "cosine_min": 0.99}}
    unchecked = variant(numerics=None)
    report = judge_documents(
        result(step(variants=[unchecked], settings=off)),
        result(step(variants=[unchecked], settings=off)),
    )
    assert not [r for r in report.verdicts if r.metric == "numerics"]
    assert report.exit_code == EXIT_OK


def test_the_docs_exit_code_table_is_the_codes():
    """One table in docs/gate.md, the same as VERDICT_EXIT_CODES and errors.EXIT_CODES."""
    page = (REPO_ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    section = page.split("## Exit codes", 1)[1]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ")]
    table = {outcome.strip().strip("`"): int(code) for outcome, code in rows[1:]}
    verdicts = {k: v for k, v in table.items() if k in VERDICT_EXIT_CODES}
    assert verdicts == VERDICT_EXIT_CODES
    assert set(table.values()) == set(EXIT_CODES)
    assert table["usage or config error"] == EXIT_USAGE
