"""The first screen says each thing once (issue 40, item 8: the comment's first screen was
too tall): a reason names its place only where the table does not already say it, a row in
the place of the row above leaves its place blank, the context is one paragraph and one
version's torch is said once, and a gate's icon stays with its word. Each is measured in a
browser by bench/comment_heights.py; the heights are asserted in tests/browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_docs import environment, result, site, step, variant
from report_runs import ITEM_REASON, hostile, judge

from compilegate.report.comment import render_comment
from compilegate.report.first_screen import AttentionTable, FirstScreen
from compilegate.report.run_set_text import render_run_set_text


def first_screen(markdown: str) -> str:
    return markdown.replace("\u00a0", " ").split("<details>", 1)[0]


def two_steps_breaking(tmp_path: Path):
    """A new graph break in mlp and another in gpt: two reasons of one kind."""
    baseline = result(step("mlp"), step("gpt"))
    head = result(
        step("mlp", variants=[variant(sites=[site("mlp.py", 12, ITEM_REASON)])]),
        step("gpt", variants=[variant(sites=[site("gpt.py", 40, "print() in forward")])]),
    )
    return judge(tmp_path, baseline, **{"torch-2.13.0": head})


def test_a_reason_names_its_place_only_where_the_table_has_that_kind_in_several(
    tmp_path: Path,
):
    screen = first_screen(render_comment(two_steps_breaking(tmp_path)))
    assert "- **graph breaks** in mlp · default: new graph break at mlp.py:12" in screen
    assert "- **graph breaks** in gpt · default: new graph break at gpt.py:40" in screen


def test_the_only_reason_of_its_kind_leaves_its_place_to_the_table(tmp_path: Path):
    run_set = hostile(tmp_path)
    screen = first_screen(render_comment(run_set))
    reasons = [line for line in screen.splitlines() if line.startswith("- **")]
    assert [line.split(":**", 1)[0] for line in reasons] == [
        "- **recompiles",
        "- **graph breaks",
        "- **numerics",
        "- **failed to run",
    ]
    assert "- **failed to run:** variant failed:" in screen
    # the terminal says it the same way
    text = render_run_set_text(run_set)
    assert "- graph breaks: new graph break at train/model.py:21" in text
    assert "failed to run in broken" not in text


def test_a_row_in_the_place_of_the_row_above_leaves_its_place_blank(tmp_path: Path):
    run_set = hostile(tmp_path)
    screen = FirstScreen.of(run_set)
    table = AttentionTable.of(screen.attention, screen.attention_with_torch)
    where = table.header.index("where")
    places = [row[where] for row in table.rows]
    assert places[0].startswith("bad|step") and places[0].endswith(" · default")
    assert places[1:] == ["", "", "", "broken · default"]
    # every row is still there, the place said on the first of its run
    assert [row[where + 1] for row in table.rows][1:4] == [
        "❌ recompiles",
        "❌ graph breaks",
        "❌ numerics: worse",
    ]


@pytest.mark.parametrize("versions", [1, 2])
def test_the_context_is_one_paragraph_and_a_version_said_once(tmp_path: Path, versions: int):
    def on(torch: str) -> dict:
        return result(step(), env=environment(torch=torch))

    others = {"torch-2.12.0": on("2.12.0")} if versions == 2 else {}
    run_set = judge(tmp_path, on("2.10.0"), **{"torch-2.13.0": on("2.13.0")}, **others)
    screen = first_screen(render_comment(run_set))
    lines = screen.split("\n\n")
    context = next(part for part in lines if part.startswith("**head**"))
    head_line, torch_line = context.split("<br>\n")
    assert "**baseline**" in head_line and "(torch 2.10.0)" in head_line
    if versions == 1:
        assert torch_line == "**torch** 2.13.0: an upgrade check against the baseline's torch"
    else:
        assert torch_line == (
            "**torch** 2.12.0, 2.13.0 · 2.12.0 and 2.13.0: an upgrade check against the "
            "baseline's torch"
        )


def test_a_gate_keeps_its_icon_and_word_on_one_line(tmp_path: Path):
    screen = render_comment(two_steps_breaking(tmp_path)).split("<details>", 1)[0]
    assert "| mlp | ❌\u00a0fails |" in screen and "| gpt | ❌\u00a0fails |" in screen
    assert "| ❌ fails |" not in screen
    # `best` last, so the header wraps to two lines in a narrow column, not three
    assert "| compiled vs eager (best) | pays off |" in screen
