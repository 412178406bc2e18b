"""An annotation is one workflow command line (report/workflow_annotation.py): pinned where
it says, escaped as the Actions toolkit escapes, never a second command."""

from __future__ import annotations

import pytest

from compilegate.report.workflow_annotation import Annotation, escape_data, escape_property


def test_escaping_follows_the_actions_toolkit() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext%3A a%2Cb"


def test_an_annotation_pins_file_line_and_title() -> None:
    note = Annotation("warning", "graph break: call to print", "train.py", 12, "Graph break")
    assert note.format_workflow_command() == (
        "::warning file=train.py,line=12,title=Graph break::graph break: call to print"
    )
    assert Annotation("notice", "done").format_workflow_command() == "::notice::done"


def test_a_message_cannot_inject_another_workflow_command() -> None:
    evil = Annotation("error", "x\n::add-mask::oops\n::set-output name=a::b", "a,b:c.py", 1)
    line = evil.format_workflow_command()
    assert "\n" not in line
    assert line == (
        "::error file=a%2Cb%3Ac.py,line=1::x%0A::add-mask::oops%0A::set-output name=a::b"
    )


def test_annotation_fields_are_checked() -> None:
    with pytest.raises(ValueError, match="level"):
        Annotation("fatal", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a file"):
        Annotation("error", "x", line=3)
