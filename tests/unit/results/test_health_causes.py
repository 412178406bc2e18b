"""Run health as facts (issue 53, item 4): a result records why its machine was unsteady as
cause objects (results/health_causes.py), a baseline marks a step recorded from such a run
with the causes' codes, and the gate keys on those; documents from before, which hold
sentences, read and are said as recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_docs import process, result, step, variant, with_processes

from compilegate.errors import BaselineError
from compilegate.gate.baseline import update_baseline
from compilegate.gate.compare import compare_to_baseline
from compilegate.report.health_words import health_line
from compilegate.results.model import MachineHealth, parse, step_of
from compilegate.results.run_health import (
    AaDisagreed,
    OthersTookCpu,
    RecordedCause,
    run_health,
    unsteady_causes,
)

BUSY = MachineHealth(cpu_count=2, load_average_mean=3.4, others_cpu_pct=61.0, steal_pct=0.0)
STEP_TIMES = ("eager_step_ms", "compiled_step_ms", "eager_step_ms_p25")
NOT_JUDGED = ("unsteady_run", "unsteady_baseline", "short_history")
BUSY_SAID = "other processes took 61 % of its CPU (load average 3.4 on 2 cores)"


def measured(aa_noise_pct: float = 1.0) -> dict:
    doc = step(variants=[variant()], eager_noise_pct=aa_noise_pct, settings={"threads": 1})
    records = [process([10.0] * 5, [8.0] * 5, [2.0] * 5) for _ in range(2)]
    return result(with_processes(doc, records[:1], [records[1:]]))


def unsteady_document() -> dict:
    document = measured(aa_noise_pct=235.0)
    steps = [step_of(raw) for raw in document["steps"]]
    document["run_health"] = run_health(BUSY, steps).to_json(as_recorded=True)
    return document


def test_a_result_records_each_cause_as_its_code_and_figures_never_a_sentence():
    document = unsteady_document()
    assert document["run_health"]["unsteady"] == [
        {"cause": "others_took_cpu", "others_cpu_pct": 61.0, "load_average": 3.4, "cores": 2},
        {"cause": "aa_disagreed", "noise_pct": 235.0},
    ]
    typed = parse(json.loads(json.dumps(document)), "r.json")  # through JSON and the door
    assert typed.run_health is not None
    assert typed.run_health.unsteady == (OthersTookCpu(61.0, 3.4, 2), AaDisagreed(235.0))
    assert typed.run_health.to_json(as_recorded=True) == document["run_health"]
    line = health_line(typed)
    assert line is not None and BUSY_SAID in line and "disagreed by up to ±235 % (A/A)" in line


def test_an_older_documents_sentences_read_and_are_said_as_recorded():
    """A sentence the numbers account for is said from them (as before); one they do not
    (written by hand, another compilegate) as recorded, and written back unchanged."""
    document = measured()
    document["run_health"] = {"machine": BUSY.to_json(), "unsteady": [BUSY_SAID]}
    typed = parse(document, "r.json")
    assert typed.run_health is not None
    assert typed.run_health.unsteady == (RecordedCause(BUSY_SAID),)
    assert unsteady_causes(typed.run_health) == (OthersTookCpu(61.0, 3.4, 2),)
    by_hand = "the fans were loud (ops ticket 42)"
    document["run_health"] = {"machine": {}, "unsteady": [by_hand]}
    typed = parse(document, "r.json")
    assert typed.run_health is not None
    assert unsteady_causes(typed.run_health) == (RecordedCause(by_hand),)
    assert by_hand in str(health_line(typed))
    assert typed.to_json()["run_health"]["unsteady"] == [by_hand]


def test_a_cause_without_its_figures_is_refused_in_one_line_naming_where():
    document = measured()
    document["run_health"] = {"machine": {}, "unsteady": [{"cause": "aa_disagreed"}]}
    with pytest.raises(BaselineError) as caught:
        parse(document, "r.json")
    message = str(caught.value)
    assert "\n" not in message and "run_health" in message and "unsteady" in message, message


def test_a_baseline_marks_an_unsteady_runs_steps_with_the_codes_and_the_gate_keys_on_them(
    tmp_path: Path,
):
    result_path = tmp_path / "result.json"
    result_path.write_text(json.dumps(unsteady_document()), encoding="utf-8")
    baseline_path = tmp_path / "baseline.json"
    update = update_baseline(result_path, baseline_path)
    assert update.unsteady_steps == ("train",)
    baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
    assert baseline["steps"][0]["unsteady_times"] == ["others_took_cpu", "aa_disagreed"]
    typed = parse(baseline, "baseline.json", "baseline")
    marks = typed.steps[0].unsteady_times
    assert marks == ("others_took_cpu", "aa_disagreed")  # CauseCode, a str enum
    # the gate keys on the mark: against this baseline no absolute step time gates, and
    # each such row says why in its facts
    assert step_times_ungated_for(typed) == {"unsteady_baseline"}
    unmarked = parse(measured(), "baseline.json", "baseline")
    assert step_times_ungated_for(unmarked) == {"short_history"}


def step_times_ungated_for(baseline) -> set[str]:
    """Why each absolute step-time row of a steady run against `baseline` may not fail the
    job (gate/judges/speed.py's step_time_gate, as the row's facts record it)."""
    rows = compare_to_baseline(baseline, parse(measured(), "r.json")).verdicts
    found = [json.dumps(r.facts.to_dict(), default=str) for r in rows if r.metric in STEP_TIMES]
    assert found
    return {why for facts in found for why in NOT_JUDGED if why in facts}


def test_an_older_baselines_sentence_mark_still_keeps_its_step_times_ungated():
    old = measured()
    old["steps"][0]["unsteady_times"] = [BUSY_SAID]
    typed = parse(old, "baseline.json", "baseline")
    assert typed.steps[0].unsteady_times == (RecordedCause(BUSY_SAID),)
    assert typed.to_json()["steps"][0]["unsteady_times"] == [BUSY_SAID]
    assert step_times_ungated_for(typed) == {"unsteady_baseline"}
