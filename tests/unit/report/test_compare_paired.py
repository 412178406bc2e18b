"""The gate on a paired comparison: every speed row is judged on the pairs (the same process
of both sides), the compile CPU time on the pairs of cold compiles, and the rows and the
first screen say so."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from gate_docs import (
    compile_cost,
    environment,
    judge_documents,
    process,
    result,
    step,
    variant,
    with_processes,
)

from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.first_screen import FirstScreen
from compilegate.report.note_words import paired_summary
from compilegate.report.row_words import row_message
from compilegate.results.model import parse

# What the machine did while each pair ran: the same factor on both sides of a pair.
LOAD = [1.0, 1.25, 0.9, 1.4]


def side(compiled_ms: float, role: str | None, cpu_s: list[float]) -> dict:
    def samples(ms: float, load: float, i: int) -> list[float]:
        return [ms * load * (1 + 0.002 * ((i + k) % 3)) for k in range(20)]

    eager = [process(samples(10.0, load, i)) for i, load in enumerate(LOAD)]
    compiled = [
        process(samples(10.0, load, i), samples(compiled_ms, load, i))
        for i, load in enumerate(LOAD)
    ]
    entry = variant(compile_cost=compile_cost(20.0, counts={}, cold_cpu_s=cpu_s))
    doc = with_processes(step(variants=[entry]), eager, [compiled])
    document = result(doc, env=environment(commit="b" * 40 if role == "base" else "h" * 40))
    if role is not None:
        document["pairing"] = {
            "id": "run-1",
            "role": role,
            "base_label": "base",
            "head_label": "head",
        }
    return document


def test_load_that_moved_between_pairs_cancels_in_a_paired_comparison() -> None:
    base = side(5.0, "base", [10.0, 12.5, 9.0])
    head = side(5.5, "head", [10.2, 12.6, 9.1])  # +10 % compiled; CPU seconds +1 %
    paired = judge_documents(base, head)
    compiled = paired.rows(metric="compiled_step_ms")[0]
    assert compiled.verdict == "regression", row_message(compiled)
    assert "4 pairs of processes" in row_message(compiled) and "paired differences" in row_message(
        compiled
    )
    cpu = paired.rows(metric="compile_cpu_s")[0]
    assert cpu.verdict == "pass" and "3 pairs of cold compiles" in row_message(cpu)
    assert paired.rows(metric="eager_step_ms")[0].verdict == "pass"
    assert paired.paired is not None
    assert paired_summary(paired.paired) == "paired, 4 pairs, same machine"

    unpaired = judge_documents(*(_unpaired(d) for d in (base, head)))
    row = unpaired.rows(metric="compiled_step_ms")[0]
    assert (row.noise_pct or 0) > 3 * (compiled.noise_pct or 0), "two samples count the load"
    assert not row.gated, "one stored run: reported, not judged (issue 28)"


def _unpaired(document: dict) -> dict:
    return {key: value for key, value in copy.deepcopy(document).items() if key != "pairing"}


def test_the_first_screen_names_the_base_and_the_pairing(tmp_path: Path) -> None:
    base = side(5.0, "base", [10.0, 12.5, 9.0])
    head = tmp_path / "result.json"
    head.write_text(json.dumps(side(5.5, "head", [10.2, 12.6, 9.1])))
    typed_base = parse(base, "result.base.json", "baseline")
    run_set = judge_run_set([ResultSource(head, "result")], typed_base, "result.base.json")
    text = " ".join(FirstScreen.of(run_set).text().split())
    assert "base bbbbbbb (torch 2.10.0; paired, 4 pairs, same machine)" in text
    assert "baseline update" not in text, "nothing to refresh: the base is measured each run"
    assert "no stored baseline to refresh" in text and "Paired: the base was measured" in text
