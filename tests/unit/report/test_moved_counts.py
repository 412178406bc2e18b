"""Exact counts never move silently (issue 54, finding 4): an extra matmul and an MSE in the
loss added 34 ATen ops (+1.0 %) and 8,000 FLOPs, under the 2 % tolerance, and the headline
said "step work unchanged" with no ⚠️ row. The tolerance still decides pass or fail; the
change is shown: in the headline, as a ⚠️ row, and with each count's exact change."""

from __future__ import annotations

import copy
from pathlib import Path

from gate_docs import compile_cost, result, step, variant
from report_runs import judge
from test_step_work_judge import documents, work

from compilegate.report.comment import render_comment
from compilegate.report.first_screen import FirstScreen
from compilegate.report.headline import headline_of
from compilegate.report.row_words import row_message
from compilegate.report.run_set_text import render_run_set_text

DIT_OPS = [["aten::mm", 600], ["aten::add", 300]]
DIT_FLOPS = [["aten::mm", 800_000_000]]


def dit_work(extra_ops: int = 0, extra_flops: int = 0) -> dict:
    """The diffusion transformer's step work: 3,400 ATen ops, 800 M FLOPs; `extra_*` the
    discarded matmul and MSE of the issue."""
    half = extra_ops // 2
    ops = [["aten::mm", 600 + half], ["aten::add", 300]]
    if extra_ops:
        ops.append(["aten::mse_loss", extra_ops - half])
    return work(
        aten_ops=3_400 + extra_ops,
        flops=800_000_000 + extra_flops,
        names_aten_ops=ops,
        names_flops=[["aten::mm", 800_000_000 + extra_flops]],
    )


def test_ops_grown_under_the_tolerance_are_shown_and_never_called_unchanged(tmp_path: Path):
    base, cur = documents(dit_work(), dit_work(extra_ops=34, extra_flops=8_000))
    run_set = judge(tmp_path, base, result=cur)
    assert run_set.exit_code == 0  # the tolerance still decides: within 2 %, a pass
    icon, headline = headline_of(run_set)
    assert icon == "⚠️", headline
    assert headline.startswith(
        "passes, but step work moved: ATen ops +34 (+1.0 %), FLOPs +8,000 (+<0.1 %), within "
        "the 2 % tolerance; "
    ), headline
    assert "step work" not in headline.split("; ", 1)[1]  # not among the unchanged
    screen = FirstScreen.of(run_set)
    (row,) = screen.attention
    assert row.cells[0] == "⚠️ step work" and row.cells[1:4] == ("3400 → 3434", "+1.0 %", "+2 %")
    assert "Needs a look (1)" in screen.text()
    # the reason under the table: each count's exact values and what moved them
    (reason,) = screen.reasons
    assert "ATen ops 3,400 → 3,434 (+17 aten::mm, +17 aten::mse_loss)" in reason.message
    assert "FLOPs 800,000,000 → 800,008,000 (+8,000 aten::mm)" in reason.message
    comment = render_comment(run_set)
    assert comment.startswith("### ⚠️ compilegate passes, but step work moved: ATen ops +34")
    assert "| ⚠️ pass |" in comment  # the details' every gate row too
    assert "unchanged" in render_run_set_text(run_set)  # the other families still are
    assert "step work unchanged" not in render_run_set_text(run_set).replace("\n", " ")


def test_the_row_names_every_judged_count_that_moved(tmp_path: Path):
    base, cur = documents(dit_work(), dit_work(extra_ops=34, extra_flops=8_000))
    run_set = judge(tmp_path, base, result=cur)
    rows = [r for v in run_set.versions for r in v.verdict.verdicts if r.metric == "step_work"]
    for row in rows:
        message = row_message(row)
        assert "ATen ops 3,400 → 3,434" in message and "FLOPs 800,000,000 → 800,008,000" in (
            message
        ), message
        assert "also moved: FLOPs" not in message


def test_unmoved_counts_are_still_unchanged_and_a_failure_still_fails(tmp_path: Path):
    base, same = documents(dit_work(), dit_work())
    icon, headline = headline_of(judge(tmp_path, base, result=same))
    assert (icon, headline.startswith("passes: ")) == ("", True), headline
    assert "step work" in headline and "unchanged" in headline
    assert not FirstScreen.of(judge(tmp_path, base, result=same)).attention
    base, grown = documents(dit_work(), dit_work(extra_ops=340))  # +10 %: past 2 %
    run_set = judge(tmp_path, base, result=grown)
    assert run_set.exit_code == 1
    assert "moved" not in headline_of(run_set)[1]  # said as the failure it is


def test_compile_work_counts_moved_within_their_tolerance_are_shown(tmp_path: Path):
    """One more guard of 100 (+1 %, under the 5 % tolerance) is a change too, named apart
    from compile time (which held)."""
    base = result(step())
    cur = copy.deepcopy(base)
    counts = {"guards": 100}
    base["steps"][0]["variants"][0]["compile_cost"] = compile_cost(10.0, counts=counts)
    cur["steps"][0]["variants"][0]["compile_cost"] = compile_cost(10.0, counts={"guards": 101})
    run_set = judge(tmp_path, base, result=cur)
    assert run_set.exit_code == 0
    icon, headline = headline_of(run_set)
    assert icon == "⚠️"
    assert "compile work moved: guards +1 (+1.0 %), within the 5 % tolerance" in headline
    assert "compile time" in headline.split("; ", 1)[1]  # what held is still said unchanged
    (row,) = FirstScreen.of(run_set).attention
    assert row.cells[0] == "⚠️ compile work" and "guards 100 → 101" in row.cells[1]


def test_an_upgrade_does_not_flag_counts_it_does_not_judge(tmp_path: Path):
    """Across torch versions compile-work counts are reported, not gated: their moves are
    the versions' own and already said so in the row."""
    base = result(step(variants=[variant()]))
    cur = copy.deepcopy(base)
    cur["steps"][0]["variants"][0]["compile_cost"] = compile_cost(10.0, counts={"guards": 3})
    cur["environment"]["torch"] = "2.11.0+cu128"
    run_set = judge(tmp_path, base, result=cur)
    assert "compile work moved" not in headline_of(run_set)[1]
