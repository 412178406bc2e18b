"""The CUDA-graph row (gate/judges/cuda_graphs.py, report/row_words/cuda_graphs.py) and what
`compilegate run` says of a variant that ran without its graphs (report/cuda_graph_words.py).

The GPU cases are the H200 runs of 2026-12-04 (launch-bound transformer, reduce-overhead
3.0×; tests/unit/data/h200-2026-12-04), with a `cuda_graphs` record as the child writes it
(child/cuda_graph_skips.py) added: none were recorded then, and no GPU is lent now.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from h200_runs import DATA, load_as_recorded_today

from compilegate.gate.judges.cuda_graphs import CudaGraphOutcome, judge_skips
from compilegate.gate.rules import Subject
from compilegate.gate.verdict import Verdict
from compilegate.report.row_words import row_message
from compilegate.report.run_text import render_run_text
from compilegate.results.model import Variant, parse

MODEL = "examples/transformer/model.py"
MUTATED = {
    "reason": "mutated inputs (1 instances)",
    "count": 1,
    "logged": True,
    "file": MODEL,
    "line": 88,
    "function": "forward",
    "origin": "repo",
}
ON_CPU = {**MUTATED, "reason": "cpu device (primals_1)", "logged": False, "line": 12}
SUBJECT = Subject("seed-small", "reduce-overhead")


def graphs(skips: int, *reasons: dict[str, Any]) -> dict[str, Any]:
    return {"skips": skips, "reasons": list(reasons)}


def with_graphs(document: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """The document with its reduce-overhead variant's `cuda_graphs` (None: left out)."""
    document = copy.deepcopy(document)
    for variant in document["steps"][0]["variants"]:
        if variant["mode"] == "reduce-overhead":
            variant.pop("cuda_graphs", None)
            if record is not None:
                variant["cuda_graphs"] = record
    return document


def variant(record: dict[str, Any] | None, degraded: tuple[str, ...] = ()) -> Variant:
    raw = with_graphs(load_as_recorded_today("run2-result.json.gz"), record)
    if degraded:
        raw["steps"][0]["variants"][1]["degraded"] = list(degraded)
    return parse(raw, "r.json").steps[0].variants[1]


def base(record: dict[str, Any] | None) -> Any:
    return variant(record).cuda_graphs


def stored(tmp_path: Path, name: str, record: dict[str, Any] | None) -> Path:
    document = json.loads(gzip.decompress((DATA / f"{name}-result.json.gz").read_bytes()))
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(with_graphs(document, record)))
    return path


@pytest.mark.parametrize("skipped", [False, True])
def test_a_skip_on_the_gpu_where_the_baseline_had_none_fails_the_job_with_its_reason(
    tmp_path: Path, cli: Callable, skipped: bool
) -> None:
    """The same commit twice on the H200 passes (issue 28); the second run with its CUDA graphs
    skipped for a mutated input fails on that row alone, saying why and where, apart from
    the graph-break row (which holds)."""
    baseline = tmp_path / "baseline.json"
    update = cli(
        "baseline",
        "update",
        "--result",
        str(stored(tmp_path, "run1", graphs(0))),
        "--baseline",
        str(baseline),
    )
    assert update.returncode == 0, update.stderr
    result = stored(tmp_path, "run2", graphs(1, MUTATED) if skipped else graphs(0))
    verdicts = tmp_path / "verdicts.json"
    compare = cli(
        "compare", "--baseline", str(baseline), "--result", str(result), "--out", str(verdicts)
    )
    rows = json.loads(verdicts.read_text())["verdicts"]
    row = next(r for r in rows if r["metric"] == "cuda_graph_skips")
    assert row["variant"] == "reduce-overhead"
    assert not [r for r in rows if r["metric"] == "cuda_graph_skips" and r["variant"] == "default"]
    if not skipped:
        assert compare.returncode == 0, compare.stdout[-2000:]
        assert (row["verdict"], row["message"]) == (
            "pass",
            "no CUDA graph skipped, as in the baseline",
        )
        return
    assert compare.returncode == 1
    assert [r["metric"] for r in rows if r["verdict"] == "regression"] == ["cuda_graph_skips"]
    assert row["message"] == (
        f"CUDA graph skips 0 → 1 (the baseline had none): mutated inputs (1 instances) at "
        f"{MODEL}:88"
    )
    breaks = next(
        r for r in rows if r["metric"] == "graph_break_sites" and r["variant"] == row["variant"]
    )
    assert breaks["verdict"] == "pass" and "CUDA" not in breaks["message"]
    assert "graph break" not in row["message"]
    shown = cli(
        "compare", "--baseline", str(baseline), "--result", str(result), "--format", "markdown"
    )
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("### ❌ compilegate fails on CUDA graphs only in seed-small")
    # the comment's first screen: the row, then torch's reason and where, under the table
    assert "| reduce-overhead | ❌ CUDA graphs skipped | 0 → 1 | +1 | +0 | - |" in lines
    assert f"- **CUDA graphs skipped:** mutated inputs (1 instances) at {MODEL}:88" in lines


def test_fewer_skips_are_an_improvement_and_a_line_that_only_moved_is_not_a_new_reason() -> None:
    moved = {**MUTATED, "line": 90}
    fewer = judge_skips(
        SUBJECT, base(graphs(2, MUTATED, ON_CPU)), variant(graphs(1, moved)), "cuda"
    )
    assert fewer is not None and fewer.verdict is Verdict.IMPROVEMENT
    assert fewer.facts.new == ()  # type: ignore[attr-defined]
    assert row_message(fewer) == (
        f"CUDA graph skips 2 → 1: fewer than in the baseline (mutated inputs (1 instances) at "
        f"{MODEL}:90)"
    )
    back = judge_skips(SUBJECT, base(graphs(1, MUTATED)), variant(graphs(0)), "cuda")
    assert back is not None and back.verdict is Verdict.IMPROVEMENT
    assert row_message(back) == "CUDA graph skips 1 → 0: the CUDA graphs are used again"


def test_as_many_skips_for_another_reason_pass_and_name_it() -> None:
    row = judge_skips(SUBJECT, base(graphs(1, ON_CPU)), variant(graphs(1, MUTATED)), "cuda")
    assert row is not None and row.verdict is Verdict.PASS
    assert row_message(row) == (
        f"CUDA graph skips 1 → 1: as many as in the baseline, now for mutated inputs (1 "
        f"instances) at {MODEL}:88"
    )


def test_on_a_cpu_the_row_says_once_the_graphs_cannot_be_used_and_gates_nothing() -> None:
    """Even with more skips than the baseline: on a CPU every graph is skipped."""
    row = judge_skips(SUBJECT, base(graphs(1, ON_CPU)), variant(graphs(3, ON_CPU)), "cpu")
    assert row is not None
    assert (row.verdict, row.gated) == (Verdict.PASS, False)
    assert row.facts.outcome is CudaGraphOutcome.NO_CUDA  # type: ignore[attr-defined]
    assert row_message(row) == (
        "CUDA graphs cannot be used on a CPU: the variant ran without them (Inductor: cpu "
        f"device (primals_1) at {MODEL}:12); not judged"
    )
    assert row_message(row).count("CUDA graphs") == 1


def test_a_baseline_from_before_the_record_makes_the_row_new_not_a_failure() -> None:
    row = judge_skips(SUBJECT, None, variant(graphs(1, MUTATED)), "cuda")
    assert row is not None and row.verdict is Verdict.NEW
    assert row_message(row) == (
        f"CUDA graph skips: 1 (mutated inputs (1 instances) at {MODEL}:88); the baseline "
        "predates this record"
    )


def test_a_run_whose_diagnostics_failed_is_missing_the_record_and_says_why() -> None:
    failed = "compile diagnostics failed: KeyError: 'x'"
    row = judge_skips(SUBJECT, base(graphs(0)), variant(None, (failed,)), "cuda")
    assert row is not None and row.verdict is Verdict.MISSING
    assert row_message(row) == f"CUDA graph skips: not measured in this run ({failed})"
    assert judge_skips(SUBJECT, None, variant(None), "cuda") is None  # neither side: no row


def test_the_run_says_a_gpu_variant_ran_without_its_graphs_in_the_table_and_the_decision() -> None:
    document = with_graphs(load_as_recorded_today("run2-result.json.gz"), graphs(1, MUTATED))
    text = render_run_text(parse(document, "r.json"))
    said = f"reduce-overhead ran without CUDA graphs: mutated inputs (1 instances) at {MODEL}:88"
    blocks = [" ".join(block.split()) for block in text.split("\n\n")]
    decision = blocks[0].split(" compilegate ")[0]  # the verdict, before the context line
    assert decision.startswith("→ seed-small: compile with reduce-overhead")
    assert decision.endswith(f"; {said}") and blocks[-1] == decision
    assert blocks[1].endswith(said)  # the note under the variants table
    clean = with_graphs(load_as_recorded_today("run2-result.json.gz"), graphs(0))
    assert "CUDA graphs" not in render_run_text(parse(clean, "r.json"))


def test_on_a_cpu_the_run_says_it_once_for_every_variant_that_asked() -> None:
    document = with_graphs(load_as_recorded_today("run2-result.json.gz"), graphs(1, ON_CPU))
    document["steps"][0]["device"] = "cpu"
    document["steps"][0]["variants"][0]["cuda_graphs"] = graphs(1, ON_CPU)
    text = render_run_text(parse(document, "r.json"), width=200)
    assert text.count("ran without CUDA graphs") == 1
    assert (
        "  default, reduce-overhead ran without CUDA graphs: they cannot be used on a CPU "
        f"(Inductor: cpu device (primals_1) at {MODEL}:12)"
    ) in text.splitlines()


def test_the_record_goes_through_both_doors_unchanged() -> None:
    document = with_graphs(load_as_recorded_today("run2-result.json.gz"), graphs(1, MUTATED))
    back = parse(document, "r.json").to_json()
    assert back["steps"][0]["variants"][1]["cuda_graphs"] == graphs(1, MUTATED)
    assert "cuda_graphs" not in back["steps"][0]["variants"][0]
