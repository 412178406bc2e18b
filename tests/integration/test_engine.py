"""The measurement engine end to end: real torch.compile (Inductor, CPU), real child processes."""

from __future__ import annotations

import pytest
from cli_helpers import REPO_ROOT, run_cli, write_config

from compilegate.schemas import validation_errors

pytestmark = pytest.mark.compile

ITERATIONS = 6


@pytest.fixture(scope="module")
def engine_run(tmp_path_factory: pytest.TempPathFactory):
    """One cold-cache run of the tiny step: model and whole-step compile, one config."""
    tmp = tmp_path_factory.mktemp("engine")
    config = write_config(
        tmp / "compilegate.yml",
        "  - name: mlp\n"
        "    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        "    variants: [{mode: default}, {mode: default, compile: step}]\n"
        f"    warmup: 2\n    iterations: {ITERATIONS}\n    rounds: 3\n"
        "    numerics: {enabled: false}\n    variant_processes: 2\n",
    )
    out = tmp / "result.json"
    return run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(out))


def test_run_succeeds_and_result_is_schema_valid(engine_run) -> None:
    assert engine_run.returncode == 0, engine_run.stderr[-3000:]
    assert validation_errors(engine_run.result, "result") == []
    env = engine_run.result["environment"]
    assert env["torch"] and env["device"] in ("cpu", "cuda") and env["inductor_cache"] == "fresh"


def test_each_variant_has_interleaved_raw_samples_and_statistics(engine_run) -> None:
    step = engine_run.result["steps"][0]
    assert step["status"] == "ok"
    assert len(step["eager"]["step_ms"]["samples"]) == ITERATIONS
    assert [v["id"] for v in step["variants"]] == ["default", "default+step"]
    for variant in step["variants"]:
        assert variant["status"] == "ok", variant["error"]
        assert len(variant["step_ms"]["samples"]) == ITERATIONS
        assert variant["step_ms"]["rounds"] == [0, 0, 1, 1, 2, 2]
        assert len(variant["eager_step_ms"]["samples"]) == ITERATIONS
        sp = variant["speedup"]
        assert sp["ci_low"] <= sp["median"] <= sp["ci_high"]
        assert variant["noise_pct"] is not None and variant["detectable_change_pct"] >= 0
        # A cold Inductor compile costs seconds; the steady compiled step costs milliseconds.
        assert variant["compile_s"] > 1.0
        assert variant["warmup_s"][0] > 10 * variant["warmup_s"][-1]


def test_each_variant_is_timed_in_its_own_processes(engine_run) -> None:
    """variant_processes: 2 — the first process compiles cold, the second reuses its cache
    and only times; each leaves its fastest iterations and raw samples."""
    step = engine_run.result["steps"][0]
    assert len(step["eager"]["processes"]) == 1
    for variant in step["variants"]:
        first, second = variant["processes"]
        for record in (first, second):
            assert set(record["fastest_ms"]) == {
                "eager",
                "eager_b",
                "compiled",
                "yardstick",
                "yardstick_launch",
            }
            assert len(record["samples_ms"]["compiled"]) == ITERATIONS
        assert first["fastest_ms"]["compiled"] == min(variant["step_ms"]["samples"])
        assert variant["compiled_process_noise_pct"] is not None
    assert step["process_noise_pct"] is not None  # five processes timed eager
    assert "timing process 2/2" in engine_run.stderr


def test_table_and_progress_are_printed(engine_run) -> None:
    assert "step mlp (cpu)" in engine_run.stdout or "step mlp (cuda)" in engine_run.stdout
    assert "default+step" in engine_run.stdout and "→ " in engine_run.stdout
    assert "compiled warm-up" not in engine_run.stderr  # a child's phases: --verbose only


def test_compile_cost_is_measured_three_ways_cold_then_warm(engine_run) -> None:
    """Wall and CPU seconds per process (cold first, then from its warm cache) and torch's
    work counts; the torch.compile() call and the lazy backward are in the compile."""
    for variant in engine_run.result["steps"][0]["variants"]:
        cost = variant["compile_cost"]
        first, second = variant["processes"]
        assert (first["cache"], second["cache"]) == ("cold", "warm")
        assert cost["wall_s"] == variant["compile_s"] == first["compile_wall_s"]
        assert 0 < variant["compile_call_s"] < variant["compile_s"]
        assert cost["cpu_s"] == first["compile_cpu_s"] and cost["cpu_s"] > 1.0
        assert cost["cpu_method"] == "rusage+proc"
        assert cost["cold_samples"] == [{"wall_s": cost["wall_s"], "cpu_s": cost["cpu_s"]}]
        assert cost["cpu_noise_pct"] is None
        assert cost["warm_wall_s"] == second["compile_wall_s"] < cost["wall_s"]
        counts = cost["counts"]
        assert all(isinstance(n, int) and n >= 1 for n in counts.values()), counts
        assert counts["backward_compile_records"] >= 1  # the lazily compiled backward
        assert variant["torch_state"] == {"changed": {}}
    assert engine_run.result["steps"][0]["eager"]["torch_state"] == {"changed": {}}


def test_the_terminal_says_the_verdict_first_and_last_and_one_line_per_child(engine_run) -> None:
    """Issue 31: one step, two variants: the decision first and last on stdout within 60
    lines, each table once; on stderr one line per child process (1 eager + 2 × 2)."""
    lines = engine_run.stdout.splitlines()
    assert len(lines) <= 60, engine_run.stdout
    assert lines[0].startswith("→ mlp: ") and lines[0] in lines[-3:], engine_run.stdout
    assert sum(1 for line in lines if line.startswith("  variant ")) == 1, engine_run.stdout
    progress = [x for x in engine_run.stderr.splitlines() if not x.startswith("note: ")]
    assert len(progress) <= 5 and all(x.startswith("[mlp]") for x in progress), progress
