"""report/speeds.py: how a payoff's speedup was estimated is recorded as a code
(results/payoff.py) and worded here, the processes behind it counted from the payoff; a
document from before the code holds the sentence, said as recorded (issue 53)."""

from __future__ import annotations

from pathlib import Path

from gate_docs import result, step, variant
from report_runs import judge

from compilegate.report.comment import render_comment
from compilegate.results.model import SpeedupEstimator, parse

OVER_4 = (
    "mean step time (outliers included), eager/compiled per process, geometric mean over 4 "
    "processes, 95 % t interval"
)
ONE = "mean step time (outliers included), eager/compiled, one process, 95 % CI"


def _with_payoff(estimator: str, processes: int) -> dict:
    payoff = {
        "decision": "compile",
        "steps_per_run": 20000,
        "speedup": {"estimate": 1.52, "low": 1.31, "high": 1.77, "estimator": estimator},
        "break_even_steps": {"estimate": 3120.0, "low": 2500.0, "high": 4700.0},
        "warm_break_even_steps": None,
        "saving_s": None,
        "processes_needed": None,
        "processes": processes,
    }
    return result(step("mlp", variants=[variant(speedup=1.29, payoff=payoff)]))


def _comment(tmp_path: Path, document: dict) -> str:
    return render_comment(judge(tmp_path, None, **{"torch-2.13.0": document})).replace(
        "\u00a0", " "
    )


def test_the_estimator_code_is_worded_with_the_payoff_s_processes(tmp_path: Path):
    document = _with_payoff("mean_over_processes", 4)
    payoff = parse(document, "result.json").steps[0].variants[0].payoff
    assert payoff is not None and payoff.speedup is not None
    assert payoff.speedup.estimator is SpeedupEstimator.MEAN_OVER_PROCESSES
    markdown = _comment(tmp_path, document)
    assert f"Compiled vs eager: {OVER_4}." in markdown
    assert "mean_over_processes" not in markdown


def test_one_process_is_worded_as_one_process(tmp_path: Path):
    markdown = _comment(tmp_path, _with_payoff("mean_one_process", 1))
    assert f"Compiled vs eager: {ONE}." in markdown


def test_an_older_document_s_sentence_reads_and_is_said_as_recorded(tmp_path: Path):
    """Recorded before the code: the sentence, whatever its process count, is kept and said."""
    sentence = OVER_4.replace("over 4", "over 3")
    document = _with_payoff(sentence, 4)
    payoff = parse(document, "result.json").steps[0].variants[0].payoff
    assert payoff is not None and payoff.speedup is not None
    assert payoff.speedup.estimator == sentence
    assert payoff.to_json()["speedup"]["estimator"] == sentence  # written back unchanged
    assert f"Compiled vs eager: {sentence}." in _comment(tmp_path, document)
