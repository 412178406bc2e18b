"""The gate on real runs: a baseline from unchanged code, then planted regressions.

Uses torch.compile with backend "eager" (Dynamo only): graph breaks, recompiles and a
compiled-only numerics change are all Dynamo's doing, and it compiles in about a second.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, run_cli, write_config

from compilegate.gate.compare import compare_to_baseline
from compilegate.report.absence_words import absence_words
from compilegate.report.decision_words import decision_sentence
from compilegate.report.row_words import row_message
from compilegate.report.wording import ICON_LEGEND
from compilegate.results.machine import MachineFingerprint
from compilegate.results.model import Absence, parse

pytestmark = pytest.mark.compile

BREAK_LINE = 1 + (REPO_ROOT / "examples/test_steps/gate_step.py").read_text().splitlines().index(
    "            torch._dynamo.graph_break()"
)


STEP = (
    "  - name: gate\n    entry: examples/test_steps/gate_step.py:make_step\n"
    "    variants: [{backend: eager}]\n    warmup: 2\n    iterations: 20\n    rounds: 4\n"
    "    threads: 1\n    env: [COMPILEGATE_PLANT]\n"  # the child sees only what is listed
)
# What a pull request could write to wave its own regression through.
HOSTILE_THRESHOLDS = (
    "thresholds: {speedup_drop_pct: 1000, eager_step_time_growth_pct: 1000, "
    "compiled_step_time_growth_pct: 1000, compile_time_growth_pct: 1000, "
    "peak_memory_growth_pct: 1000, recompiles_increase: 1000, "
    "graph_break_sites_increase: 1000, fallbacks_increase: 1000}\n"
)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("gate")
    config = write_config(tmp / "compilegate.yml", STEP)
    first = run_cli(
        "run",
        "--config",
        str(config),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(tmp / "base-result.json"),
    )
    assert first.returncode == 0, first.stderr[-3000:]
    baseline = tmp / "baseline.json"
    update = run_cli(
        # --force: this test is about the gate, not about how quiet CI's machine is
        "baseline",
        "update",
        "--result",
        str(tmp / "base-result.json"),
        "--baseline",
        str(baseline),
        "--force",
    )
    assert update.returncode == 0, update.stderr

    def run(plant: str = "", *extra: str, config_path: Path = config):
        return run_cli(
            "run",
            "--config",
            str(config_path),
            "--repo",
            str(REPO_ROOT),
            "--out",
            str(tmp / f"result-{plant or 'same'}.json"),
            "--baseline",
            str(baseline),
            *extra,
            env={"COMPILEGATE_PLANT": plant},
        )

    run.baseline = baseline  # type: ignore[attr-defined]  # for tests that re-judge
    return run


def words(stdout: str) -> str:
    """The report with its line wrapping undone."""
    return " ".join(stdout.split())


def headline_of(stdout: str) -> str:
    """What failed (the report's headline up to what did not move), after the result table."""
    report = words(stdout)
    return report[report.index("compilegate fails") :].split(";")[0]


def test_unchanged_code_is_not_a_regression(gate) -> None:
    """The same code again passes. On a busy machine a row may come out inside the noise
    (⚠️, which does not fail the job); no row may fail it. The icon legend names ❌ too."""
    run = gate()
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert "compilegate passes" in run.stdout, run.stdout
    failing = [line for line in run.stdout.splitlines() if "❌" in line and ICON_LEGEND not in line]
    assert not failing, run.stdout


def test_run_finds_its_hardware_class_baseline_beside_another_class(gate, tmp_path) -> None:
    """Issue 52, item 5: `run --baseline B` where B holds another hardware class's baseline
    (another CPU model) and this machine's class has its own file beside it: the run is
    judged against its class's file, in full (exit 0), not across classes."""
    own = json.loads(gate.baseline.read_text(encoding="utf-8"))
    other = json.loads(gate.baseline.read_text(encoding="utf-8"))
    other["environment"]["cpu_model"] = "Stand-in CPU of another class"
    named = tmp_path / "baseline.json"
    named.write_text(json.dumps(other), encoding="utf-8")
    machine = MachineFingerprint.of(parse(own, "baseline.json", "baseline")).hardware_class
    own_file = tmp_path / f"baseline.{machine.key}.json"
    own_file.write_text(json.dumps(own), encoding="utf-8")
    run = gate("", "--baseline", str(named))
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert "another hardware class" not in words(run.stdout)
    assert f"compare --baseline {own_file}" in words(run.stdout)


@pytest.mark.parametrize(
    ("plant", "metric", "message"),
    [
        (
            "graph_break",
            "graph breaks",
            f"new graph break at examples/test_steps/gate_step.py:{BREAK_LINE}",
        ),
        ("recompile", "recompiles", "recompiles 0 → 1"),
        ("numerics", "numerics", "numerics"),
    ],
)
def test_planted_regression_fails_the_gate(gate, plant: str, metric: str, message: str) -> None:
    run = gate(plant)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    headline = headline_of(run.stdout)
    assert "compilegate fails on" in headline and metric in headline, run.stdout
    assert message in words(run.stdout)
    if plant == "numerics":  # issue 8 item 6: never advise a variant whose numerics fail
        advice = run.result["steps"][0]["recommendation"]
        assert advice["variant"] is None and "numerics_untrusted" in advice["caveats"]
        assert advice["ruled_out"]["numerics"] == "fail"  # a fact; the words are report/'s
        said = decision_sentence(parse(run.result, "result.json").steps[0])
        assert "is not recommended: its numerics fail" in str(said)


def test_a_pull_requests_own_thresholds_do_not_loosen_the_gate(gate, tmp_path: Path) -> None:
    """Issue 8 item 1 on a real run: the PR's config allows 1000 new graph breaks; the
    baseline's policy (0) applies, and the PR's values are shown beside it."""
    hostile = tmp_path / "compilegate.yml"
    hostile.write_text("version: 1\n" + HOSTILE_THRESHOLDS + "steps:\n" + STEP)
    run = gate("graph_break", config_path=hostile)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    headline = headline_of(run.stdout)
    assert "compilegate fails on" in headline and "graph breaks" in headline, run.stdout
    assert "graph_break_sites_increase 1000 (applied: 0)" in words(run.stdout)


def test_an_added_layer_is_not_more_compile_work(gate) -> None:
    """Issue 31: one more layer adds FX nodes and guards in proportion to the ATen ops of the
    compiled region; judged per op, the compile-work row passes (raw: +FX nodes beyond 5 %).
    The run may still fail on step time (the layer costs time): only the row is asserted."""
    run = gate("extra_layer")
    assert run.result is not None, run.stderr[-2000:]
    baseline = json.loads(gate.baseline.read_text())
    report = compare_to_baseline(
        parse(baseline, "baseline.json", "baseline"), parse(run.result, "result.json", "result")
    )
    (row,) = report.rows(metric="compile_work")
    base_cost = baseline["steps"][0]["variants"][0]["compile_cost"]
    cost = run.result["steps"][0]["variants"][0]["compile_cost"]
    assert cost["eager_ops"] > base_cost["eager_ops"]
    assert cost["counts"]["fx_nodes"] > base_cost["counts"]["fx_nodes"] * 1.05  # raw: beyond
    assert row.verdict == "pass", row_message(row)
    assert "ATen ops eager" in row_message(row)


def step_works(document: dict) -> dict[str, dict]:
    """Each side's step-work record (child/step_work.py): eager's, then each variant's,
    without its `timing` (times of the profiled iteration, which move with the load)."""
    step = document["steps"][0]
    records = {"eager": step["eager"]["step_work"]} | {
        v["id"]: v["step_work"] for v in step["variants"]
    }
    return {side: {k: v for k, v in r.items() if k != "timing"} for side, r in records.items()}


def test_step_work_is_the_same_in_another_run_and_an_item_is_one_more_sync(gate) -> None:
    """Issue 39: the counts of one iteration are functions of the code, the same in another
    run of it (other processes, another moment's load), name by name; a `.item()` planted in
    the loss is one more host sync, eager and compiled, and leaves the FLOPs alone."""
    first = step_works(json.loads(gate.baseline.read_text()))
    same = gate()
    assert same.result is not None, same.stderr[-2000:]
    assert step_works(same.result) == first
    for work in first.values():
        counts = work["counts"]
        assert counts["aten_ops"] > 0 and counts["flops"] > 0 and counts["allocations"] > 0
        assert counts["host_syncs"] == 0
        assert counts["kernels"] is None
        assert "CPU" in absence_words(Absence(work["absent"]["kernels"]))
    assert first["eager"]["counts"]["compiled_region_calls"] == 0
    assert first["default+eager"]["counts"]["compiled_region_calls"] == 1
    planted = gate("item")
    assert planted.result is not None, planted.stderr[-2000:]
    for side, work in step_works(planted.result).items():
        assert work["counts"]["host_syncs"] == 1, side
        assert work["top"]["host_syncs"] == [["aten::_local_scalar_dense", 1]], side
        assert work["counts"]["flops"] == first[side]["counts"]["flops"], side


# A measuring interpreter as a pull request's own packages can make it (a `.pth` file or a
# sitecustomize in its venv or image): it runs compilegate's child as usual, having first
# replaced what the probe reports of the machine by another CPU model.
FORGING_INTERPRETER = """\
import sys
code, package, spec = sys.argv[2], sys.argv[3], sys.argv[4]
sys.argv = ["-c", package, spec]
prelude, call = code.split("from compilegate.child.main", 1)
scope = {"__name__": "__main__"}
exec(prelude, scope)
import compilegate.child.environment as environment
honest = environment.describe_environment
environment.describe_environment = lambda: {**honest(), "cpu_model": "Forged CPU of another class"}
exec("from compilegate.child.main" + call, scope)
"""


def test_a_probe_that_names_another_cpu_does_not_pick_that_classs_baseline(gate, tmp_path) -> None:
    """Issue 52: the hardware class picks the baseline a result is judged against; a probe
    forged to name another CPU model had the run judged against that class's file (a pool's
    other node type, whose times and compile seconds are another machine's; without one,
    across classes, where no speed or compile time is judged). compilegate reads the class
    itself (run/machine_reading.py): the run is judged against its own class's file, the
    forgery is named, and the compiled step made slower fails on speed."""
    forge = tmp_path / "forge.py"
    forge.write_text(FORGING_INTERPRETER, encoding="utf-8")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {forge} "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    forged_class = json.loads(gate.baseline.read_text(encoding="utf-8"))
    forged_class["environment"]["cpu_model"] = "Forged CPU of another class"
    machine = MachineFingerprint.of(parse(forged_class, "baseline.json", "baseline")).hardware_class
    forged_file = gate.baseline.with_name(f"baseline.{machine.key}.json")
    forged_file.write_text(json.dumps(forged_class), encoding="utf-8")
    try:
        run = gate("compile_only", "--python", str(python))
    finally:
        forged_file.unlink()
    assert f"compare --baseline {gate.baseline} " in words(run.stdout), run.stdout
    assert run.result["environment"]["probe_overruled"] == ["cpu_model"], run.stderr[-2000:]
    assert "Forged" not in json.dumps(run.result["environment"])
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert "step speed" in headline_of(run.stdout), run.stdout  # judged in its own class
