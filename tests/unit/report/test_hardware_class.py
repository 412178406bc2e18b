"""Issue 52, item 5: baselines per hardware class, on real documents.

The H200 run of 2026-12-04 (tests/unit/data/h200-2026-12-04, as in
../shared/reference/gpu-runs/2026-12-04: torch 2.11, the seed transformer, one H200) and a
CPU run (tests/unit/data/step_bound/transformer.json: torch 2.13, the same transformer
code at the CPU size, a 2-core AMD EPYC, 2026-12-06). Everything they measured is as
recorded; what is adapted is the step's identity, so the two read as one config measured
on two machines of a pool: the CPU step takes the H200 step's name, entry and settings,
and both declare `device: auto` (the H200 config said `cuda`, which a CPU cannot run; a
config meant for both classes says `auto`). Through the CLI as a user runs it (in this
process): `compare` against the other class's baseline, then `baseline update` writing the
class's own file, and `compare` again finding it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from h200_runs import load_as_recorded_today

from compilegate.errors import EXIT_NOT_JUDGED, EXIT_OK, EXIT_REGRESSION
from compilegate.gate.compare import compare_to_baseline
from compilegate.report.note_words import note_words
from compilegate.report.row_words import row_message
from compilegate.results.model import parse

CPU_RUN = Path(__file__).parents[1] / "data" / "step_bound" / "transformer.json"
H200 = "NVIDIA H200 ×1"
CPU = "CPU AMD EPYC (2 cores)"


def h200_run() -> dict[str, Any]:
    """The H200's first run, its one step declared `device: auto`."""
    document = load_as_recorded_today("run1-result.json.gz")
    (step,) = [s for s in document["steps"] if s["name"] == "seed-small"]
    step["settings"]["device"] = "auto"
    document["steps"] = [step]
    document["declared_steps"] = ["seed-small"]
    return document


def cpu_run(like: dict[str, Any]) -> dict[str, Any]:
    """The CPU run under the H200 step's name, entry and settings (its measurements as
    recorded)."""
    document = json.loads(CPU_RUN.read_text(encoding="utf-8"))
    (step,) = document["steps"]
    (h200_step,) = like["steps"]
    for key in ("name", "entry", "config_fingerprint", "settings"):
        step[key] = copy.deepcopy(h200_step[key])
    document["declared_steps"] = [step["name"]]
    return document


def with_graph_break(document: dict[str, Any]) -> dict[str, Any]:
    """The same run with a graph-break site planted in the model's forward, as a run records
    one (a print() there: Dynamo cannot trace the builtin)."""
    document = copy.deepcopy(document)
    variant = document["steps"][0]["variants"][0]
    site = {
        "file": "examples/transformer_step.py",
        "line": 30,
        "reason": "Failed to trace builtin operator `print`",
        "count": 1,
        "origin": "repo",
    }
    variant["graph_breaks"] = {"count": 1, "sites": [site]}
    return document


def judged(baseline: dict[str, Any], result: dict[str, Any]) -> Any:
    return compare_to_baseline(
        parse(baseline, "baseline.json", "baseline"), parse(result, "result.json", "result")
    )


def test_the_two_machines_are_two_hardware_classes():
    from compilegate.results.machine import MachineFingerprint  # (issue 52's: new there)

    h200 = MachineFingerprint.of(parse(h200_run(), "h200", "result"))
    cpu = MachineFingerprint.of(parse(cpu_run(h200_run()), "cpu", "result"))
    assert (h200.driver, h200.cuda, h200.cpu_count) == ("580.159.04", "13.0", 16)
    assert h200.hardware_class.key == "cuda-nvidia-h200-x1"  # driver, CUDA, host: notes
    assert cpu.hardware_class.key == "cpu-amd-epyc-2-cores"


@pytest.mark.parametrize(
    ("baseline_of", "classes"),
    [("h200", f"{H200}; this run: {CPU}"), ("cpu", f"{CPU}; this run: {H200}")],
)
def test_another_class_is_judged_only_on_what_hardware_does_not_move(baseline_of, classes):
    """Across device types: graph breaks, recompiles, fallbacks and numerics are judged;
    step work, compile work, speed, step times, compile time and memory are not, and one
    row says so with both classes. Nothing failed: exit 4 (not judged)."""
    h200 = h200_run()
    cpu = cpu_run(h200)
    baseline, result = (h200, cpu) if baseline_of == "h200" else (cpu, h200)
    report = judged(baseline, result)
    default = [r for r in report.verdicts if r.variant == "default"]
    assert [(r.metric, r.verdict) for r in default] == [
        ("recompiles", "pass"),
        ("graph_break_sites", "pass"),
        ("fallbacks_to_eager", "pass"),
        ("numerics", "pass"),
    ]
    (whole,) = [r for r in report.verdicts if r.metric == "step"]
    assert whole.verdict == "incomparable"
    assert row_message(whole) == (
        f"not judged against another hardware class ({classes}): step speed, step times, "
        "compile time, peak memory, and (another device type) step work and compile work"
    )
    judged_metrics = {r.metric for r in report.verdicts if r.verdict != "new"}
    assert not judged_metrics & {"speedup", "eager_step_ms", "step_work", "compile_work"}
    assert report.exit_code == EXIT_NOT_JUDGED
    (note,) = [n for n in map(note_words, report.notes) if "hardware class" in n]
    assert note.startswith(
        f"baseline from another hardware class ({classes}): judged only on what hardware "
        "does not move — graph breaks, recompiles, fallbacks to eager, DDP splits, numerics, "
        "torch settings; not judged: step work and compile work (another device type)"
    )


def test_a_graph_break_is_caught_against_another_class(tmp_path, cli):
    """Before issue 52 the CPU run against the H200 baseline was `incomparable` whole
    (exit 4) and a new graph break went unjudged; now it fails the job, naming its line."""
    baseline = write(tmp_path / "baseline.json", h200_run())
    result = write(tmp_path / "result.json", with_graph_break(cpu_run(h200_run())))
    compared = cli("compare", "--baseline", str(baseline), "--result", str(result))
    assert compared.returncode == EXIT_REGRESSION, compared.stdout
    assert "examples/transformer_step.py:30" in compared.stdout
    words = " ".join(compared.stdout.split())  # the report wraps its lines at 100 columns
    assert f"against another hardware class ({H200}; this run: {CPU})" in words


def test_each_class_finds_its_own_baseline(tmp_path, cli):
    """`baseline update` with the CPU run beside the H200 baseline writes the CPU class's
    own file and leaves the H200's as it was; `compare` then judges the CPU run against
    it in full (same class: speed and counts too), and the H200 run still against the
    H200's."""
    baseline = write(tmp_path / "baseline.json", h200_run())
    h200_before = baseline.read_text(encoding="utf-8")
    cpu = write(tmp_path / "cpu-result.json", cpu_run(h200_run()))
    update = cli("baseline", "update", "--result", str(cpu), "--baseline", str(baseline))
    own = tmp_path / "baseline.cpu-amd-epyc-2-cores.json"
    assert update.returncode == EXIT_OK and own.is_file(), update.stdout + update.stderr
    assert f"the baseline of hardware class {CPU}, kept beside {baseline}" in update.stdout
    assert baseline.read_text(encoding="utf-8") == h200_before
    again = cli("compare", "--baseline", str(baseline), "--result", str(cpu), "--format", "json")
    verdict = json.loads(again.stdout)
    metrics = {row["metric"] for row in verdict["verdicts"]}
    assert {"speedup", "step_work", "compile_work"} <= metrics and "step" not in metrics
    table = cli("compare", "--baseline", str(baseline), "--result", str(cpu))
    assert str(own) in table.stdout and "another hardware class" not in table.stdout
    h200 = write(tmp_path / "h200-result.json", h200_run())
    same = cli("compare", "--baseline", str(baseline), "--result", str(h200), "--format", "json")
    assert "step" not in {row["metric"] for row in json.loads(same.stdout)["verdicts"]}


def write(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
