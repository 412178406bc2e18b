"""Issue 31 on a real run: karpathy/nanoGPT's 2-layer GPT, variants default and
default+dynamic on torch 2.13.0, its pull request adding `if torch.isnan(y).any().item():
raise` in attention (data/nanogpt/: the head's result and the stored baseline). Both variants
fail alike on compile work, a graph break and a fallback to eager: the first screen says
each failure once with both variants, each reason once, and what the compile-work number
counts. The comment's height is measured in a browser (tests/browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_docs import result, site, step, variant
from report_runs import ITEM_REASON, judge, nanogpt_graph_break

from compilegate.report.comment import render_comment

BOTH = "gpt · default; default, dynamic"


@pytest.fixture
def screen(tmp_path: Path) -> str:
    comment = render_comment(nanogpt_graph_break(tmp_path))
    return comment.replace("\u00a0", " ").split("<details>", 1)[0]


def test_three_failures_alike_on_both_variants_are_three_rows_naming_both(screen: str):
    assert f"**Fails (3)**, all in {BOTH}" in screen
    rows = [line for line in screen.splitlines() if line.startswith("| ❌")]
    assert [row.split(" | ")[0] for row in rows] == [
        "| ❌ compile work",
        "| ❌ graph breaks",
        "| ❌ fallbacks to eager",
    ]


def test_each_reason_is_said_once(screen: str):
    reasons = [line for line in screen.splitlines() if line.startswith("- **")]
    assert screen.count("Unsupported Tensor.item() call") == 1  # the graph break's, not again
    # the title says where every row is (all in gpt · default; default, dynamic): not again
    assert "- **graph breaks:** new graph break at model.py:106" in screen
    assert "- **fallbacks to eager:** forward in model.py fell back to eager" in screen
    assert screen.count(BOTH) == 1
    assert len(reasons) == 3  # one for each row of the table
    # the count the table gives is not said again in its reason
    assert "fallbacks to eager 0 → 1" not in screen


def test_the_compile_work_cell_names_the_count_it_shows(screen: str):
    assert "| ❌ compile work | graphs 1 → 5 | +400 % | +5 % | - |" in screen
    # the reason lists what crossed the limit, not the counts that fell (FX nodes 91 → 53);
    # the counts alike on both variants once, the one only the default variant has named
    assert (
        "- **compile work:** graphs 1 → 5, compile records 1 → 6 "
        "(backward compile records 1 → 5 on default): grew by more than the 5 % tolerance"
    ) in screen
    assert "FX nodes" not in screen


def test_the_unsteady_machine_s_advice_is_said_once(screen: str):
    assert screen.count("rerun when it is quiet") == 1
    assert "default, dynamic compiled +16 %, p25 +38 %" in screen


def test_rows_unlike_on_two_variants_stay_apart(tmp_path: Path):
    """The same graph break on both variants is one row; a speedup drop on one variant only
    is its own row, in its own place."""
    broken = [site("model.py", 72, ITEM_REASON)]
    baseline = result(step("gpt", variants=[variant("default"), variant("max")]))
    head = result(
        step(
            "gpt",
            variants=[
                variant("default", sites=broken),
                variant("max", sites=broken, speedup=1.0),
            ],
        )
    )
    screen = render_comment(judge(tmp_path, baseline, **{"torch-2.13.0": head}))
    screen = screen.replace("\u00a0", " ").split("<details>", 1)[0]
    # one step for every row: named once in the title, each row's variants in its place
    assert "**Fails (2)**, all in gpt" in screen
    assert "| variant | what |" in screen
    assert "| default; max | ❌ graph breaks | 0 → 1 | +1 | +0 | - |" in screen
    assert "| max | ❌ speedup vs eager |" in screen
    # the one graph-break row says where (default; max): its reason need not
    assert "- **graph breaks:** new graph break at model.py:72" in screen
