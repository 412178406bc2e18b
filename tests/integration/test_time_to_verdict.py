"""Issue 28, time to verdict, through the real runner (real torch.compile, Inductor, CPU): a
step with dropout and two variants. The float64 reference comes from the step's eager
process, once for both variants; each variant's numerics still passes with dropout (its
compiled copy compiled again with fallback_random); a later process only times; every
process says which CPU its timed rounds ran on (`threads: 1`)."""

from __future__ import annotations

import io
import os

import pytest
from cli_helpers import REPO_ROOT, TORCH_PYTHON, write_config

from compilegate.config.loading import load_config_file
from compilegate.run.orchestrate import RunOptions, run_config
from compilegate.schemas import validation_errors

# In CI's second lane (scripts/run-tests.sh): its 52 s even the lanes, now that the other
# lane lost test_run_against_in_process.py's run and this one some of its own.
pytestmark = [pytest.mark.compile, pytest.mark.lane_beside]

STEP = (
    "  - name: dropout\n"
    "    entry: examples/test_steps/dropout_mlp.py:make_step\n"
    "    variants: [{mode: default}, {mode: default, dynamic: false}]\n"
    "    warmup: 2\n    iterations: 4\n    rounds: 2\n    threads: 1\n"
    "    variant_processes: 2\n"
)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("time-to-verdict")
    config = load_config_file(write_config(tmp / "compilegate.yml", STEP), repo_root=REPO_ROOT)
    options = RunOptions(out_path=tmp / "result.json", python=TORCH_PYTHON, stream=io.StringIO())
    return run_config(config, options)


def test_one_reference_for_both_variants_and_numerics_pass_with_dropout(document: dict) -> None:
    assert validation_errors(document, "result") == []
    step = document["steps"][0]
    assert step["status"] == "ok", step["error"]
    assert len(step["variants"]) == 2
    for variant in step["variants"]:
        assert variant["status"] == "ok", variant["error"]
        numerics = variant["numerics"]
        assert numerics["status"] == "pass", numerics["reason"]
        assert numerics["fallback_random"] is True
        assert numerics["compiled_graphs"] >= 1 and numerics["compiled_copy_s"] > 0
        assert numerics["reference"] == "float64" and numerics["reference_from"] == "eager"


def test_every_process_records_where_it_was_pinned(document: dict) -> None:
    step = document["steps"][0]
    processes = step["eager"]["processes"] + [
        p for variant in step["variants"] for p in variant["processes"]
    ]
    assert len(processes) == 5
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    expected = [max(allowed)] if len(allowed) >= 2 else None
    assert all(p["cpus"] == expected for p in processes)


def test_phases_show_one_reference_and_later_processes_that_only_time(document: dict) -> None:
    step = document["steps"][0]
    (eager,) = step["eager"]["processes"]
    assert eager["phases_s"]["reference"] > 0
    for variant in step["variants"]:
        first, later = variant["processes"]
        assert "numerics" in first["phases_s"] and "reference" not in first["phases_s"]
        assert set(later["phases_s"]) <= {"start", "import", "build", "eager warm-up"} | {
            "compile",
            "timed",
            "other",
        }


def test_the_time_to_verdict_bench_reads_this_runs_document(document: dict) -> None:
    """bench/time_to_verdict.py splits a run's time by the phases the document records (it
    once read progress lines `run` stopped printing, and measured nothing: issue 40)."""
    import sys

    sys.path.insert(0, str(REPO_ROOT / "bench"))
    import time_to_verdict

    processes = time_to_verdict.processes_of(document)
    assert [p.first_of_variant for p in processes].count(True) == 2  # two variants, cold
    total = sum(p.wall_s for p in processes)
    summary = time_to_verdict.summary(processes, total, document)
    assert summary["cold_compiles_s"] > 0 and summary["timed_s"] > 0
    assert summary["total_over_floor"] is not None and summary["total_over_floor"] >= 1
    second = sum(v["numerics"]["compiled_copy_s"] for v in document["steps"][0]["variants"])
    assert summary["numerics_compile_s"] == round(second, 1) > 0
    colds = summary["cold_compile_record"]
    assert [c["variant"] for c in colds] == [v["id"] for v in document["steps"][0]["variants"]]
    assert all(c["cpu_s"] > 0 and c["wall_s"] > 0 for c in colds)


def test_the_bench_splits_a_config_of_ones_own(tmp_path) -> None:
    """`--config FILE` (issue 40: the GPU example's split on one card) runs that config, every
    step of it, from the repository `--repo` names; a variant on the eager backend keeps it
    short."""
    import json
    import subprocess
    import sys

    config = tmp_path / "mine.yml"
    config.write_text(
        "version: 1\nsteps:\n  - name: mine\n"
        "    entry: examples/test_steps/dropout_mlp.py:make_step\n"
        "    variants: [{backend: eager}]\n"
        "    warmup: 2\n    iterations: 4\n    rounds: 2\n    threads: 1\n"
        "    variant_processes: 2\n",
        encoding="utf-8",
    )
    split = tmp_path / "split.json"
    bench = REPO_ROOT / "bench" / "time_to_verdict.py"
    command = [sys.executable, str(bench), "--config", str(config), "--repo", str(REPO_ROOT)]
    done = subprocess.run(
        [*command, "--python", TORCH_PYTHON, "--json", str(split)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(split.read_text(encoding="utf-8"))
    labels = [p["label"] for p in result["processes"]]
    assert labels == ["mine/eager#1", "mine/default+eager", "mine/default+eager#2"]
    assert "min); cold compiles" in done.stdout
