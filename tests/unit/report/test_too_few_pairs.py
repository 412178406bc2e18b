"""Noise figures that cannot mean anything (issue 54, finding 9): with variant_processes: 2 a
paired run's speed rows showed "±1660 %"; nothing warned before the run. And `baseline
update`'s note said "speedup noise ±94 %" beside a table's "1.08× (1.04–1.12)", two figures
for one speedup, unnamed."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gate_docs import environment, process, result, step, variant, with_processes

from compilegate.config.loading import load_config_text
from compilegate.gate.baseline import update_baseline
from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.baseline_update_words import baseline_update_summary
from compilegate.report.first_screen import FirstScreen
from compilegate.report.row_words import row_message
from compilegate.results.model import parse

# What the machine did in each pair: the second pair's compiled process was disturbed.
LOADS = [(1.0, 1.0), (1.0, 3.0)]
MIN_PAIRS = 3  # results/stats.MIN_PAIRS


def samples(ms: float, load: float, i: int) -> list[float]:
    return [ms * load * (1 + 0.002 * ((i + k) % 3)) for k in range(20)]


def side(role: str, compiled_ms: float) -> dict:
    eager = [process(samples(10.0, 1.0, i)) for i in range(len(LOADS))]
    compiled = [
        process(samples(10.0, e, i), samples(compiled_ms, c, i))
        for i, (e, c) in enumerate(LOADS if role == "head" else [(1.0, 1.0)] * len(LOADS))
    ]
    settings = {"variant_processes": len(LOADS), "eager_processes": len(LOADS)}
    doc = with_processes(step(variants=[variant()], settings=settings), eager, [compiled])
    document = result(doc, env=environment(commit=("b" if role == "base" else "h") * 40))
    document["pairing"] = {"id": "p", "role": role, "base_label": "base", "head_label": "head"}
    return document


def judged(tmp_path: Path):
    paths = {}
    for role in ("base", "head"):
        paths[role] = tmp_path / f"{role}.json"
        paths[role].write_text(json.dumps(side(role, 5.0)), encoding="utf-8")
    base = parse(json.loads(paths["base"].read_text()), str(paths["base"]), "baseline")
    return judge_run_set([ResultSource(paths["head"], "head")], base, str(paths["base"]))


def test_two_pairs_say_too_few_processes_instead_of_a_meaningless_noise(tmp_path: Path) -> None:
    run_set = judged(tmp_path)
    verdict = run_set.versions[0].verdict
    assert verdict is not None
    rows = [r for r in verdict.verdicts if r.metric in ("speedup", "compiled_step_ms")]
    undecided = [r for r in rows if not r.decidable]
    assert undecided and all(r.noise_pct and r.noise_pct > 100 for r in undecided)
    for row in undecided:
        message = row_message(row)
        assert "too few processes to judge: 2 pairs of processes" in message, message
        assert f"at least {MIN_PAIRS}" in message and "±" not in message.split(":", 1)[1], message
    screen = " ".join(FirstScreen.of(run_set).text().split())
    assert "too few processes to judge" in screen, screen
    assert not any(f"±{r.noise_pct:.0f} %" in screen for r in undecided), screen


CONFIG = """version: 1
steps:
  - name: dit
    entry: models.py:make_step
    variant_processes: 2
  - name: mlp
    entry: models.py:make_mlp
"""


def test_a_paired_run_of_two_processes_is_warned_before_it_measures(tmp_path: Path, capsys) -> None:
    from compilegate.cli.run_command import warn_too_few_pairs  # 5a5d0e2 had none

    config = load_config_text(CONFIG, source="compilegate.yml", repo_root=tmp_path)
    warn_too_few_pairs(config)
    line = capsys.readouterr().err
    assert line.count("\n") == 1, line
    assert "paired speed cannot be judged with fewer than 3 pairs of processes" in line
    assert "variant_processes: 2 (dit)" in line and "mlp" not in line, line
    warn_too_few_pairs(dataclasses.replace(config, steps=config.steps[1:]))
    assert capsys.readouterr().err == ""


def test_baseline_update_names_the_figure_its_noise_is_of(tmp_path: Path) -> None:
    """The note's noise and the speedup beside it come from the same per-process values
    (each process's fastest iterations, what a pull request's row compares); the table's
    figure (by mean step time) is named as what it is."""
    document = side("head", 5.0)
    document.pop("pairing")
    entry = document["steps"][0]["variants"][0]
    entry["speedup_process_noise_pct"] = 94.0
    entry["payoff"] = {
        "decision": "undecided",
        "steps_per_run": 10_000,
        "speedup": {
            "estimate": 1.08,
            "low": 1.04,
            "high": 1.12,
            "estimator": "mean_over_processes",
        },
        "break_even_steps": None,
        "warm_break_even_steps": None,
        "saving_s": None,
        "processes_needed": None,
        "compile_s": None,
    }
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    line = baseline_update_summary(update_baseline(path, tmp_path / "baseline.json"))
    assert "speedup noise ±94 %" not in line, line
    assert "its speedup by each process's fastest iterations" in line, line
    assert "over 2 processes) has noise ±94 %" in line, line
    assert "the run's table shows 1.08× (1.04–1.12), by mean step time" in line, line
