"""The step-work judge (gate/judges/step_work.py): counts of one iteration, judged against one
stored run whatever the load; a host sync added per step fails on its own; the row names
what came in."""

from __future__ import annotations

import copy

from gate_docs import environment, judge_documents, result, step, variant

from compilegate.errors import EXIT_OK, EXIT_REGRESSION
from compilegate.gate.acceptance import accept
from compilegate.gate.verdict import Acceptance
from compilegate.report.row_words import row_message


def work(**changes: object) -> dict:
    """A CPU step-work record (child/step_work.py) of a small MLP step: `changes` replace
    counts; `names_<count>` replace a count's names."""
    record = {
        "counts": {
            "aten_ops": 113, "compiled_region_calls": 0, "kernels": None,
            "cuda_graph_replays": None, "host_syncs": 0, "flops": 2_720_000,
            "allocations": 40, "allocated_bytes": 65_536,
        },
        "absent": {"kernels": "no device kernels on the CPU", "cuda_graph_replays": "CUDA only"},
        "top": {
            "aten_ops": [["aten::mm", 6], ["aten::addmm", 3], ["aten::relu", 2]],
            "flops": [["aten::mm", 1_800_000], ["aten::addmm", 920_000]],
        },
        "batch_index": 3,
    }  # fmt: skip
    for key, value in changes.items():
        if key.startswith("names_"):
            record["top"][key.removeprefix("names_")] = value
        else:
            record["counts"][key] = value
    return record


def documents(base_work: dict | None, cur_work: dict | None, **env: str) -> tuple[dict, dict]:
    docs = []
    for counted, environ in ((base_work, None), (cur_work, env or None)):
        doc = result(step(variants=[variant()]), env=environment(**environ) if environ else None)
        for subject in (doc["steps"][0]["eager"], doc["steps"][0]["variants"][0]):
            if counted is not None:
                subject["step_work"] = copy.deepcopy(counted)
        docs.append(doc)
    return docs[0], docs[1]


def rows(base_work: dict | None, cur_work: dict | None, **env: str):
    report = judge_documents(*documents(base_work, cur_work, **env))
    return report, {r.variant: r for r in report.verdicts if r.metric == "step_work"}


def test_the_same_work_passes_and_is_gated() -> None:
    report, judged = rows(work(), work())
    assert set(judged) == {"eager", "default"}
    for row in judged.values():
        assert (row.verdict, row.gated) == ("pass", True), row_message(row)
        assert "every count as in the baseline" in row_message(row)
        assert "counted on one side only" not in row_message(row)  # kernels: the CPU's, both
    assert report.exit_code == EXIT_OK


def test_an_item_per_step_is_a_regression_on_its_own_and_named() -> None:
    """Issue 39's plant: `.item()` in the loss, one more host sync a step; the ATen ops grew
    by 1 of 113 (under the tolerance), the sync alone fails."""
    item = work(host_syncs=1, aten_ops=114,
                names_host_syncs=[["aten::_local_scalar_dense", 1]],
                names_aten_ops=[["aten::mm", 6], ["aten::addmm", 3], ["aten::relu", 2],
                                ["aten::_local_scalar_dense", 1]])  # fmt: skip
    report, judged = rows(work(), item)
    row = judged["eager"]
    assert (row.verdict, row.threshold) == ("regression", 0.0), row_message(row)
    assert "host syncs 0 → 1 (+1 aten::_local_scalar_dense)" in row_message(row)
    assert "none may be added per step; also moved: ATen ops" in row_message(row)
    assert (row.baseline, row.current) == (0, 1)
    assert report.exit_code == EXIT_REGRESSION


def test_a_new_item_names_its_line_where_both_sides_recorded_their_sites() -> None:
    base = {**work(host_syncs=1, names_host_syncs=[["aten::_local_scalar_dense", 1]])}
    base["sync_sites"] = [["torch/optim/adamw.py:95", 1]]
    cur = work(host_syncs=2, names_host_syncs=[["aten::_local_scalar_dense", 2]])
    cur["sync_sites"] = [["torch/optim/adamw.py:95", 1], ["model.py:106", 1]]
    _, judged = rows(base, cur)
    row = judged["eager"]
    assert row.verdict == "regression"
    assert "host syncs 1 → 2 (+1 aten::_local_scalar_dense at model.py:106)" in row_message(row)
    # Without sites on one side (an older baseline), the op alone is named.
    _, older = rows(work(host_syncs=1, names_host_syncs=[["aten::_local_scalar_dense", 1]]), cur)
    assert "(+1 aten::_local_scalar_dense)" in row_message(older["eager"])


def test_a_redundant_matmul_grows_the_flops_and_ops_beyond_the_tolerance() -> None:
    matmul = work(aten_ops=123, flops=4_290_000,
                  names_aten_ops=[["aten::mm", 14], ["aten::addmm", 3], ["aten::relu", 2]],
                  names_flops=[["aten::mm", 3_370_000], ["aten::addmm", 920_000]])  # fmt: skip
    _, judged = rows(work(), matmul)
    row = judged["default"]
    assert row.verdict == "regression", row_message(row)
    assert "ATen ops 113 → 123 (+8 aten::mm)" in row_message(row)
    assert "FLOPs 2,720,000 → 4,290,000 (+1,570,000 aten::mm)" in row_message(row)
    assert row.change is not None and row.change > 50  # the FLOPs, the largest change


def test_less_work_is_an_improvement_and_noise_free_changes_within_tolerance_pass() -> None:
    _, judged = rows(work(), work(flops=2_000_000))
    assert judged["eager"].verdict == "improvement"
    _, judged = rows(work(), work(allocated_bytes=65_536 + 512))  # +0.8 %
    assert judged["eager"].verdict == "pass" and "within the 2 % tolerance" in row_message(
        judged["eager"]
    )


def test_across_torch_versions_only_flops_host_syncs_and_eagers_ops_are_judged() -> None:
    more_ops = work(aten_ops=150, allocations=60)
    _, judged = rows(work(), more_ops, torch="2.14.1")
    row = judged["default"]
    assert row.verdict == "pass" and row.gated, row_message(row)  # FLOPs and syncs: judged
    assert "ATen ops 113 → 150; allocations 40 → 60: reported; " in row_message(row)
    assert "only FLOPs and host syncs are judged" in row_message(row)
    assert judged["eager"].verdict == "regression"  # eager's ATen ops are the user's code
    _, judged = rows(work(), work(flops=3_000_000), torch="2.14.1")
    assert judged["eager"].verdict == "regression"


def test_a_baseline_before_the_pass_is_new_and_a_run_without_it_is_missing() -> None:
    _, judged = rows(None, work())
    assert judged["eager"].verdict == "new" and not judged["eager"].gated
    _, judged = rows(work(), None)
    assert judged["eager"].verdict == "missing"
    _, judged = rows(None, None)
    assert judged == {}


def test_a_label_naming_step_work_accepts_the_row() -> None:
    base, cur = documents(work(), work(host_syncs=1))
    report = judge_documents(base, cur)
    label = "compilegate: accept: step_work"
    accepted = accept(report, "compilegate: accept", Acceptance(label, "maintainer", "a" * 40))
    assert accepted.exit_code == EXIT_OK
    assert {r.verdict for r in accepted.verdicts if r.metric == "step_work"} == {"accepted"}


def test_max_autotune_does_not_gate_aten_ops_and_flops_but_host_syncs() -> None:
    base, cur = documents(work(), work(flops=3_000_000))
    for doc in (base, cur):
        doc["steps"][0]["variants"][0]["mode"] = "max-autotune"
        doc["steps"][0]["variants"][0]["id"] = "max-autotune"
    report = judge_documents(base, cur)
    (row,) = [r for r in report.verdicts if r.metric == "step_work" and r.variant != "eager"]
    assert row.verdict == "pass" and "not gated under max-autotune" in row_message(row)
    base, cur = documents(work(), work(host_syncs=1))
    for doc in (base, cur):
        doc["steps"][0]["variants"][0]["mode"] = "max-autotune"
        doc["steps"][0]["variants"][0]["id"] = "max-autotune"
    report = judge_documents(base, cur)
    assert {r.verdict for r in report.verdicts if r.metric == "step_work"} == {"regression"}


def test_the_comment_says_which_speed_rows_were_judged_by_counts_time_or_only_reported():
    from compilegate.gate.run_set import ResultSource, judge_run_set
    from compilegate.report.first_screen import speed_judged_how
    from compilegate.results.model import parse

    base, cur = documents(work(), work(host_syncs=1))
    import json
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "result.json").write_text(json.dumps(cur))
    run_set = judge_run_set(
        [ResultSource(folder / "result.json", "r")], parse(base, "baseline.json", "baseline")
    )
    said = speed_judged_how(run_set)
    assert said is not None
    assert "Judged by counts of work (the same on any machine, under any load): step work." in said
    assert "Judged by time: speedup vs eager." in said
    assert "Only reported: eager step time; compiled step time." in said


def test_the_counts_the_child_sends_are_the_ones_the_document_types() -> None:
    """child/protocol.py (what a child may send) and results/model.py (what the door types)
    each list the counts: the parent's wings never import the child, so they are held equal
    here, and the judge names each."""
    from compilegate.child.protocol import STEP_WORK_COUNTS
    from compilegate.gate.judges.step_work import COUNTS
    from compilegate.results.model import StepWorkCounts

    assert StepWorkCounts.REQUIRED == STEP_WORK_COUNTS
    assert set(COUNTS) == set(STEP_WORK_COUNTS)
