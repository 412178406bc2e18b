"""Trying to talk the gate out of a regression, through the real CLI.

Each way issue 8 found to make the gate pass what it should not is tried here with a crafted
baseline and result, judged by `python -m compilegate compare` in a subprocess (no torch
needed): a result carrying a hostile config's values, a step or variant that vanished, a
measurement that went missing, a NaN, another machine. Each must fail the gate with the
documented exit code and say why in one line, or be rejected as an invalid document (exit 2,
one line naming the key). The same suite passes a legitimate unchanged run, a run restricted
with --step, and an operator's own --threshold.

Item 6 (the recommendation) is not a comparison: tests/unit/results/test_recommendation.py, and the
planted numerics failure in test_gate_end_to_end.py, which checks a real run's advice.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CliRun, run_cli
from gate_docs import compile_cost, environment, process, result, step, variant, with_processes

from compilegate.errors import (
    EXIT_NOT_JUDGED,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_RUN_ERROR,
    EXIT_USAGE,
)

Doc = dict[str, Any]
CPU_ENV = {"device": "cpu", "gpu_name": None, "driver": None, "cuda": None}


@dataclass(frozen=True)
class Attempt:
    """A baseline, a result, and what the gate must answer."""

    baseline: Doc
    result: Doc | str  # a str is written verbatim (a JSON text Python's json would not write)
    exit_code: int
    says: tuple[str, ...] = ()


def one_variant(**fields: Any) -> Doc:
    return result(step(variants=[variant(**fields)]))


def edited(document: Doc, edit: Callable[[Doc], None]) -> Doc:
    edit(document)
    return document


def first_variant(document: Doc) -> Doc:
    return document["steps"][0]["variants"][0]


def hostile_thresholds(document: Doc) -> None:
    loose = dict.fromkeys(document["steps"][0]["settings"]["thresholds"], 1000)
    document["steps"][0]["settings"]["thresholds"] = loose


def loose_numerics(document: Doc) -> None:
    loose = {"enabled": True, "steps": 2, "tol": 1.0, "cosine_min": 0.0}
    document["steps"][0]["settings"]["numerics"] = loose


def without_settings(document: Doc) -> None:
    del document["steps"][0]["settings"]
    del document["steps"][0]["config_fingerprint"]


def failed_diagnostics(document: Doc) -> None:
    first_variant(document).update(
        recompiles=None,
        graph_breaks=None,
        fallbacks_to_eager=None,
        degraded=["compile diagnostics failed: KeyError: 'frames'"],
    )


def strip(*keys: str) -> Callable[[Doc], None]:
    def edit(document: Doc) -> None:
        for key in keys:
            del first_variant(document)[key]

    return edit


def timed_in(processes: int, compiled_ms: float) -> Doc:
    """A run whose variant was timed in `processes` processes that disagree by ±12 %."""
    doc = step(variants=[variant(step_ms=compiled_ms)], settings={"variant_processes": processes})
    scatter = (0.88, 1.12, 0.92, 1.08)[:processes]
    records = [process([10.0] * 30, [compiled_ms * s] * 30) for s in scatter]
    return result(with_processes(doc, [process([10.0] * 30)], [records]))


def wall_time_gated(gated: bool, compile_s: float) -> Doc:
    settings = {"gate_compile_wall_time": gated}
    return result(step(variants=[variant(compile_s=compile_s)], settings=settings))


def more_compile_work() -> Doc:
    document = one_variant()
    first_variant(document)["compile_cost"] = compile_cost(10.0, counts={"fx_nodes": 300})
    return document


def nan_token(token: str) -> str:
    """A result whose speedup is a bare JSON token (json.dumps writes NaN as `NaN`)."""
    document = one_variant(speedup=0.5)
    first_variant(document)["speedup"]["median"] = math.nan
    return json.dumps(document).replace("NaN", token)


ATTACKS = {
    # 1. The pull request sets its own policy.
    "1 hostile thresholds in the PR's config": Attempt(
        result(),
        edited(one_variant(speedup=0.5), hostile_thresholds),
        EXIT_REGRESSION,
        ("speedup 1.25x → 0.50x", "speedup_drop_pct 1000 (applied: 5)"),
    ),
    "1 hostile numerics tolerance turns pass→fail into a pass": Attempt(
        result(),
        edited(one_variant(numerics="pass"), loose_numerics),
        EXIT_NOT_JUDGED,
        ("not compared: the step's configuration changed: numerics", "'tol': 1.0"),
    ),
    "1 a result without its settings dodges the config check": Attempt(
        result(),
        edited(one_variant(speedup=0.5), without_settings),
        EXIT_NOT_JUDGED,
        ("warmup 5 → (not recorded)",),
    ),
    "1 the PR's config switches the compile wall-time gate off": Attempt(
        wall_time_gated(True, 10.0),
        wall_time_gated(False, 40.0),
        EXIT_REGRESSION,
        ("compile time 10.0 s → 40.0 s",),
    ),
    "1 fewer timing processes than the baseline's (variant_processes: 1)": Attempt(
        timed_in(4, 8.0),
        timed_in(1, 8.0 * 1.24),
        EXIT_NOT_JUDGED,
        ("variant_processes 4 → 1", "fewer processes lower the gate's power"),
    ),
    "1 more compile work, whatever the machine's load": Attempt(
        result(),
        more_compile_work(),
        EXIT_REGRESSION,
        ("compile work: FX nodes 1 → 300",),
    ),
    # 2. Steps and variants vanish.
    "2 a step deleted from the config": Attempt(
        result(step("a"), step("b")),
        result(step("a")),
        EXIT_NOT_JUDGED,
        ("b: step removed: in the baseline, not in this run's config",),
    ),
    "2 a step deleted while the run was restricted to the others": Attempt(
        result(step("a"), step("b")),
        result(step("a"), declared_steps=["a"]),
        EXIT_NOT_JUDGED,
        ("step removed",),
    ),
    "2 a variant renamed away from its baseline": Attempt(
        result(step(variants=[variant("default")], fingerprint="fp-1")),
        result(step(variants=[variant("default2", speedup=0.5)], fingerprint="fp-2")),
        EXIT_NOT_JUDGED,
        ("train · default: variant removed",),
    ),
    "2 a changed warmup": Attempt(
        result(),
        result(step(settings={"warmup": 1}, fingerprint="fp-2", variants=[variant(speedup=0.5)])),
        EXIT_NOT_JUDGED,
        ("the step's configuration changed: warmup 5 → 1",),
    ),
    "2 a variant that errored in the baseline": Attempt(
        one_variant(status="error", error="timed out after 600 s"),
        one_variant(speedup=0.5),
        EXIT_NOT_JUDGED,
        ("no usable baseline: the baseline run of this variant failed (timed out after 600 s)",),
    ),
    "2 a step that errored in the baseline": Attempt(
        result(step(status="error", error="eager: boom", variants=[])),
        one_variant(speedup=0.5),
        EXIT_NOT_JUDGED,
        ("no usable baseline: the baseline run of this step failed (eager: boom)",),
    ),
    # 3. Missing measurements.
    "3 a degraded variant: its diagnostics failed": Attempt(
        result(),
        edited(one_variant(), failed_diagnostics),
        EXIT_NOT_JUDGED,
        ("graph breaks: not measured in this run (compile diagnostics failed: KeyError",),
    ),
    "3 numerics errored": Attempt(
        result(),
        one_variant(numerics="error"),
        EXIT_NOT_JUDGED,
        ("numerics not checked in this run (error",),
    ),
    "3 numerics dropped from the result": Attempt(
        result(),
        one_variant(numerics=None),
        EXIT_NOT_JUDGED,
        ("numerics not checked in this run (no verdict",),
    ),
    "3 a metric nulled": Attempt(
        result(),
        one_variant(compile_s=None),
        EXIT_NOT_JUDGED,
        ("compile time: not measured in this run",),
    ),
    "3 a metric stripped": Attempt(
        result(),
        edited(one_variant(), strip("compile_s")),
        EXIT_USAGE,
        ("at steps[0].variants[0]: 'compile_s' is a required property",),
    ),
    "3 an ok variant with no metrics at all": Attempt(
        result(),
        edited(
            one_variant(),
            strip("speedup", "step_ms", "eager_step_ms", "compile_s", "graph_breaks"),
        ),
        EXIT_USAGE,
        ("at steps[0].variants[0]: 'compile_s' is a required property (and 4 more problems)",),
    ),
    # 4. NaN.
    "4 a NaN speedup": Attempt(
        result(),
        nan_token("NaN"),
        EXIT_USAGE,
        ("at steps[0].variants[0].speedup.median: NaN is not a finite number",),
    ),
    "4 an Infinity speedup": Attempt(
        result(),
        nan_token("Infinity"),
        EXIT_USAGE,
        ("speedup.median: Infinity is not a finite number",),
    ),
    "4 an overflowing number": Attempt(
        result(),
        nan_token("1e999"),
        EXIT_USAGE,
        ("speedup.median: Infinity is not a finite number",),
    ),
    # 5. Another machine.
    "5 another CPU model": Attempt(
        result(env=environment(**CPU_ENV, cpu_model="AMD EPYC 9654")),
        result(step(variants=[variant(speedup=0.5)]), env=environment(**CPU_ENV)),
        EXIT_NOT_JUDGED,
        (
            "not judged against another hardware class (CPU AMD EPYC 9654 (16 cores); this "
            "run: CPU Intel(R) Xeon(R) Platinum 8480+ (16 cores)): step speed, step times, "
            "compile time, peak memory",
        ),
    ),
    "5 the CPU model left out of the result": Attempt(
        result(env=environment(**CPU_ENV)),
        result(env=environment(**CPU_ENV, cpu_model=None)),
        EXIT_NOT_JUDGED,
        ("this run: CPU (model not recorded) (16 cores)",),
    ),
    "5 another GPU model": Attempt(
        result(env=environment(gpu_name="NVIDIA A100-SXM4-80GB")),
        result(),
        EXIT_NOT_JUDGED,
        ("against another hardware class (NVIDIA A100-SXM4-80GB ×1; this run: NVIDIA H200 ×1)",),
    ),
    "5 another driver is compared, not waved through": Attempt(
        result(env=environment(driver="550.54.15")),
        result(step(variants=[variant(speedup=0.5)]), env=environment(driver="570.124.06")),
        EXIT_REGRESSION,
        ("NVIDIA driver 550.54.15 (baseline) vs 570.124.06 (this run): compared",),
    ),
}

LEGITIMATE = {
    "an unchanged run": Attempt(result(), result(), EXIT_OK, ("compilegate passes: step speed",)),
    "a step left out with --step": Attempt(
        result(step("a"), step("b")),
        result(step("a"), declared_steps=["a", "b"]),
        EXIT_OK,
        ("b: not selected in this run (--step): not compared",),
    ),
    "a new step and variant": Attempt(
        result(step("a", variants=[variant("default")], fingerprint="fp-1")),
        result(
            step("a", variants=[variant("default"), variant("max")], fingerprint="fp-2"),
            step("b"),
        ),
        EXIT_OK,
        ("new variant: not in the baseline", "new step: not in the baseline"),
    ),
    "a failed variant is an error, not a pass": Attempt(
        result(),
        one_variant(status="error", error="CUDA out of memory"),
        EXIT_RUN_ERROR,
        ("variant failed: CUDA out of memory",),
    ),
}


def compare(tmp_path: Path, attempt: Attempt, *extra: str) -> tuple[CliRun, Path, Path]:
    baseline, res = tmp_path / "baseline.json", tmp_path / "result.json"
    baseline.write_text(json.dumps(attempt.baseline), encoding="utf-8")
    text = attempt.result if isinstance(attempt.result, str) else json.dumps(attempt.result)
    res.write_text(text, encoding="utf-8")
    run = run_cli("compare", "--baseline", str(baseline), "--result", str(res), *extra)
    return run, baseline, res


@pytest.mark.parametrize("name", ATTACKS)
def test_each_attempt_fails_the_gate_or_is_rejected(tmp_path: Path, name: str) -> None:
    attempt = ATTACKS[name]
    run, baseline, res = compare(tmp_path, attempt)
    output = run.stdout + run.stderr
    assert run.returncode == attempt.exit_code, output
    assert "Traceback" not in output
    words = " ".join(output.split())  # the report wraps its lines at 100 columns
    for fragment in attempt.says:
        assert fragment in words, output
    if attempt.exit_code == EXIT_USAGE:
        assert run.stdout == ""
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("compilegate: error: ")
        assert str(res) in run.stderr
    else:
        assert run.stdout.startswith("❌ compilegate fails")  # every attempt fails the job
        refresh = f"compilegate baseline update --result {res} --baseline {baseline}"
        if attempt.exit_code != EXIT_RUN_ERROR:  # a refresh does not accept a failed run
            assert f"  {refresh}" in run.stdout.splitlines()


@pytest.mark.parametrize("name", LEGITIMATE)
def test_a_legitimate_run_is_judged_as_it_is(tmp_path: Path, name: str) -> None:
    attempt = LEGITIMATE[name]
    run, _, _ = compare(tmp_path, attempt)
    assert run.returncode == attempt.exit_code, run.stdout + run.stderr
    words = " ".join(run.stdout.split())
    for fragment in attempt.says:
        assert fragment in words, run.stdout
    assert "baseline update" not in run.stdout  # nothing to accept


def test_the_operators_threshold_flag_is_kept(tmp_path: Path) -> None:
    """--threshold is the workflow's (trusted): it may loosen; the result may not."""
    attempt = Attempt(result(), one_variant(speedup=1.10), EXIT_REGRESSION)
    assert compare(tmp_path, attempt)[0].returncode == EXIT_REGRESSION
    run, _, _ = compare(tmp_path, attempt, "--threshold", "speedup_drop_pct=15")
    assert run.returncode == EXIT_OK, run.stdout
    assert "thresholds set on the command line, for every step: speedup_drop_pct 15" in " ".join(
        run.stdout.split()
    )


def test_a_flaky_variant_on_the_default_branch_keeps_its_baseline(tmp_path: Path) -> None:
    """Item 2 end to end: the default branch's run of a variant fails; `baseline update`
    keeps its last good baseline, so the next pull request's regression is still caught."""
    baseline, good, flaky, pr = (tmp_path / f"{n}.json" for n in ("b", "good", "flaky", "pr"))
    good.write_text(json.dumps(one_variant(speedup=1.25)))
    flaky.write_text(json.dumps(one_variant(status="error", error="timed out after 600 s")))
    pr.write_text(json.dumps(one_variant(speedup=0.5)))
    for accepted in (good, flaky):
        update = run_cli(
            "baseline", "update", "--result", str(accepted), "--baseline", str(baseline)
        )
        assert update.returncode == EXIT_OK, update.stderr
    assert "1 variant(s) kept from the previous baseline (train/default (failed in this run" in (
        update.stdout
    )
    run = run_cli("compare", "--baseline", str(baseline), "--result", str(pr))
    assert run.returncode == EXIT_REGRESSION, run.stdout
    assert "speedup 1.25x → 0.50x" in run.stdout
