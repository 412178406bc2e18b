"""Issue 53: the child records codes and facts, report/absence_words.py words them. A
document written the new way says, on every screen, what an older document holding the
child's sentence for the same facts said (those sentences are the child's at 5a5d0e2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_docs import judge_documents, recompile, result, step, variant

from compilegate.child.protocol import STEP_WORK_COUNTS
from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.absence_words import step_work_absent_words
from compilegate.report.annotations import annotations_for
from compilegate.report.comment import render_comment
from compilegate.report.degraded_words import degraded_reasons
from compilegate.report.row_words import row_message
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse

# What the child wrote before, for the facts each code records (child/step_work.py).
OLD_STEP_WORK = {
    "cpu_no_kernels": (
        "on the CPU there are no device kernels: eager's ops run in their ATen kernels "
        "(aten_ops), and Inductor's generated C++ kernels leave no profiler event without "
        "cpp.enable_kernel_profile, which would need another compile"
    ),
    "cpu_no_cuda_graphs": "CUDA graphs exist only on CUDA",
    "no_compiled_region": "this torch's profiler marks no compiled region (no Dynamo event)",
    "no_compiled_region_ops": (
        "this torch's profiler marks no compiled region (no Dynamo event): ops inside and "
        "outside compiled code cannot be told apart"
    ),
    "recompiled": (
        "the counted iteration compiled (torch._dynamo's counters moved): not a steady step"
    ),
}


def texts(tmp_path: Path, current: dict[str, Any]) -> dict[str, str]:
    """The comment, `report` text and `run` text of `current` against the default result,
    written to `tmp_path` (the texts name its path: one folder for the documents compared)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "result.json").write_text(json.dumps(current), encoding="utf-8")
    baseline = result(step())
    run_set = judge_run_set(
        [ResultSource(tmp_path / "result.json", "head")],
        parse(baseline, "baseline.json", "baseline"),
        "baseline.json",
    )
    return {
        "comment": render_comment(run_set),
        "report": render_run_set_text(run_set),
        "run": render_run_text(parse(current, "result.json"), run_set=run_set),
    }


def with_variant(**fields: Any) -> dict[str, Any]:
    cur = variant()
    cur.update(fields)
    return result(step(variants=[cur]))


def numerics(**fields: Any) -> dict[str, Any]:
    return {"steps": 2, "dtype": "fp32", "tol": 1e-4, **fields}


@pytest.mark.parametrize(
    ("coded", "recorded", "said"),
    [
        (
            numerics(status="error", reason="error", error="RuntimeError: out of memory"),
            numerics(status="error", reason="RuntimeError: out of memory"),
            "numerics not checked in this run (error: RuntimeError: out of memory)",
        ),
        (
            numerics(status="skipped", reason="skipped_zero_steps"),
            numerics(status="skipped", reason="numerics.steps is 0"),
            "numerics not checked in this run (skipped: numerics.steps is 0)",
        ),
    ],
)
def test_a_numerics_code_is_said_as_the_childs_sentence_was(
    tmp_path: Path, coded: dict, recorded: dict, said: str
) -> None:
    new, old = with_variant(numerics=coded), with_variant(numerics=recorded)
    (row,) = judge_documents(result(step()), new).rows(metric="numerics")
    assert row_message(row) == said
    assert texts(tmp_path, new) == texts(tmp_path, old)


def test_ranks_that_disagree_are_said_with_the_numerics_as_the_childs_reason_said(
    tmp_path: Path,
) -> None:
    failed = "1 of 4 tensors differ beyond tolerance: grad:w"
    ranks = (
        "the ranks disagree: after the compiled steps the parameters of rank 1, 3 differ "
        "from rank 0's (DDP keeps them equal)"
    )
    group = {"wrapper": "ddp", "world_size": 4, "backend": "gloo", "ranks": []}
    checked = numerics(status="fail", failed=["grad:w"])
    new = with_variant(
        numerics={**checked, "reason": failed},
        distributed={**group, "ranks_agree": False, "ranks_differ": [1, 3]},
    )
    old = with_variant(
        numerics={**checked, "reason": f"{failed}; {ranks}"},
        distributed={**group, "ranks_agree": False},
    )
    assert f"{failed}; {ranks}" in texts(tmp_path, new)["comment"]
    assert texts(tmp_path, new) == texts(tmp_path, old)


def test_a_failed_diagnostics_pass_is_said_as_its_note_was(tmp_path: Path) -> None:
    lost = {"graph_breaks": None, "recompiles": None, "fallbacks_to_eager": None}
    new = with_variant(**lost, diagnostics_error="KeyError: 'frames'")
    old = with_variant(**lost, degraded=["compile diagnostics failed: KeyError: 'frames'"])
    missing = judge_documents(result(step()), new).rows(verdict="missing")
    assert {r.metric for r in missing} == {"recompiles", "graph_break_sites", "fallbacks_to_eager"}
    assert all(
        "(compile diagnostics failed: KeyError: 'frames')" in row_message(r) for r in missing
    )
    (typed,) = parse(new, "result.json").steps[0].variants
    assert typed.not_wholly_compiled
    assert degraded_reasons(typed) == ["compile diagnostics failed: KeyError: 'frames'"]
    assert texts(tmp_path, new) == texts(tmp_path, old)


def test_each_step_work_code_is_said_as_the_childs_sentence_was() -> None:
    counts = dict.fromkeys(STEP_WORK_COUNTS, 0)  # the one declaration of the keys

    def said(absent: dict[str, str], **extra: Any) -> dict[str, str]:
        work = {"counts": {**counts, **dict.fromkeys(absent)}, "absent": absent, "top": {}}
        doc = with_variant(step_work={**work, "batch_index": 0, **extra})
        (typed,) = parse(doc, "result.json").steps[0].variants
        assert typed.step_work is not None
        return step_work_absent_words(typed.step_work)

    keys = ["kernels", "cuda_graph_replays", "compiled_region_calls", "aten_ops", "flops"]
    coded = dict(zip(keys, OLD_STEP_WORK))
    recorded = {key: OLD_STEP_WORK[code] for key, code in coded.items()}
    assert said(coded) == said(recorded) == recorded
    failed = said(dict.fromkeys(counts, "count_pass_failed"), pass_error="RuntimeError: no data")
    assert set(failed.values()) == {"the count pass failed: RuntimeError: no data"}


def test_nothing_repeated_is_said_on_every_screen_as_the_childs_sentence_was(
    tmp_path: Path,
) -> None:
    """A variant's regional lever the child found no repeated block for: the code (issue 53's
    last items) renders as the sentence the child wrote at 5a5d0e2 did."""
    sentence = (
        "the model has no nn.ModuleList or nn.Sequential of two or more blocks of one class: "
        "regional compilation has no repeated block to compile once and reuse"
    )
    new = with_variant(regional={"absent": "no_repeated_block"})
    old = with_variant(regional={"absent": sentence})
    said = texts(tmp_path, new)
    assert f"regional absent: {sentence}" in " ".join(said["run"].split())
    assert said == texts(tmp_path, old)


# What the child wrote where torch gave no reason for a recompile, before issue 53's last items.
OLD_RECOMPILE_REASONS = {
    "no_guard_failure_logged": (
        "no guard failure was logged (torch <= 2.4 compiles each instance of a module class "
        "separately)"
    ),
    "unknown_guard_failure": "unknown guard failure",
}


@pytest.mark.parametrize("code", list(OLD_RECOMPILE_REASONS))
def test_a_recompile_torch_gave_no_reason_for_is_said_as_the_childs_sentence_was(
    tmp_path: Path, code: str
) -> None:
    """On every screen, in the annotations, and judged against a baseline that recorded the
    sentence: the same recompile (not a new one), said the same."""
    sentence = OLD_RECOMPILE_REASONS[code]

    def with_recompile(reason: str) -> dict[str, Any]:
        return with_variant(recompiles={"count": 1, "events": [recompile(reason=reason)]})

    new, old = with_recompile(code), with_recompile(sentence)
    said = texts(tmp_path, new)
    assert sentence in " ".join(said["report"].split())
    assert said == texts(tmp_path, old)

    def annotated(current: dict[str, Any]) -> list[str]:
        (tmp_path / "result.json").write_text(json.dumps(current), encoding="utf-8")
        run_set = judge_run_set(
            [ResultSource(tmp_path / "result.json", "head")],
            parse(result(step()), "baseline.json", "baseline"),
            "baseline.json",
        )
        return [a.message for a in annotations_for(run_set)]

    assert annotated(new) == annotated(old)
    assert annotated(new)[0].endswith(f"): {sentence}")
    for baseline in (old, new):  # the same recompile, whichever form the baseline holds
        (row,) = judge_documents(baseline, new).rows(metric="recompiles")
        (before,) = judge_documents(old, old).rows(metric="recompiles")
        assert (row.verdict, row_message(row)) == (before.verdict, row_message(before))
