"""What a run set pins to the pull request's lines (report/annotations.py): new graph breaks in
the repository as errors, recompiles beyond the baseline's as warnings, every in-repository
graph break a warning when there is no baseline; one annotation per site across variants and
versions; errors first."""

from __future__ import annotations

import json
from pathlib import Path

from report_runs import NANOGPT, hostile, judge, nanogpt_graph_break, two_versions_failing

from compilegate.report.annotations import annotations_for


def test_the_real_nanogpt_graph_break_is_one_error_at_its_line_naming_both_variants(
    tmp_path: Path,
):
    (note,) = annotations_for(nanogpt_graph_break(tmp_path))
    assert (note.level, note.file, note.line) == ("error", "model.py", 106)
    assert note.title == "compilegate: new graph break"
    assert note.message.startswith(
        "new graph break in gpt/default, gpt/default+dynamic (torch 2.13.0+cpu): "
        "Unsupported Tensor.item() call"
    )


def test_one_site_on_two_versions_is_one_annotation_naming_both(tmp_path: Path):
    (note,) = annotations_for(two_versions_failing(tmp_path))
    assert (note.level, note.file, note.line) == ("error", "model.py", 181)
    assert "(torch 2.9.1+cpu, torch 2.10.0+cpu)" in note.message


def test_errors_come_before_the_recompile_warnings(tmp_path: Path):
    notes = annotations_for(hostile(tmp_path))
    assert [(n.level, n.file, n.line) for n in notes] == [
        ("error", "train/model.py", 21),
        ("warning", "model.py", 30),
    ]
    assert notes[1].title == "compilegate: recompile"


def test_without_a_baseline_a_graph_break_in_the_repository_is_a_warning(tmp_path: Path):
    head = json.loads((NANOGPT / "head.json").read_text(encoding="utf-8"))
    (note,) = annotations_for(judge(tmp_path, None, **{"torch-2.13.0": head}))
    assert (note.level, note.file, note.line) == ("warning", "model.py", 106)
    assert note.message.startswith("graph break in gpt/default, gpt/default+dynamic")


def test_the_baseline_s_own_sites_are_not_new(tmp_path: Path):
    head = json.loads((NANOGPT / "head.json").read_text(encoding="utf-8"))
    assert annotations_for(judge(tmp_path, head, **{"torch-2.13.0": head})) == []
