"""Measured code's output cannot become a GitHub Actions workflow command in our log."""

from __future__ import annotations

import pytest

from compilegate.run.relay import neutralise


@pytest.mark.parametrize(
    "line",
    [
        "::add-mask::hide-the-evidence",
        "  ::stop-commands::pwned",
        "::error file=a.py,line=1::forged",
        "##[error]forged",
        "loss 0.1 ##[set-output name=verdict;]pass",
        "fine\r::add-mask::x",
        "fine\n::warning::x",
    ],
)
def test_no_relayed_line_is_a_workflow_command(line: str) -> None:
    out = neutralise(line)
    assert not out.lstrip().startswith("::") and "##[" not in out
    assert "\r" not in out and "\n" not in out


def test_ordinary_output_is_unchanged() -> None:
    assert neutralise("step 3: loss=0.25 a::b") == "step 3: loss=0.25 a::b"


def test_only_lines_with_the_childs_own_token_are_shown_as_progress() -> None:
    """Issue 29: the step shares the child's stderr; a line it writes with a copied progress
    prefix is its output (in the tail), never a progress line the parent prints as its own."""
    import collections
    import io

    from compilegate.child.protocol import Phase, progress_line, progress_prefix
    from compilegate.run.child_process import ChildOutcome
    from compilegate.run.launcher import relay_output

    lines = [
        progress_line("a1b2", Phase.TIMED, "step", 1.0, "measuring"),
        "compilegate-progress: ::add-mask::REGRESSION",
        progress_prefix("0000") + "::add-mask::REGRESSION",
    ]
    outcome, tail, shown = ChildOutcome(None, None), collections.deque(), io.StringIO()
    relay_output(lines, outcome, tail, shown, progress_token="a1b2", show_output=True)
    first, *rest = shown.getvalue().splitlines()
    assert first == "  step [   1.0s] measuring"
    assert rest and all(line.startswith("    | ") for line in rest)  # shown as its output
    assert outcome.phase is Phase.TIMED and outcome.doing == "measuring"
    assert list(tail) == lines[1:]  # the step's output, as it wrote it (no line start: inert)


def test_without_verbose_a_childs_phases_are_kept_not_printed() -> None:
    """Issue 31: stderr gets the parent's one line per child; the phases only with --verbose
    (the last one still names where a failed child stopped)."""
    import collections
    import io

    from compilegate.child.protocol import Phase, progress_line
    from compilegate.run.child_process import ChildOutcome
    from compilegate.run.launcher import relay_output

    lines = [progress_line("a1b2", Phase.TIMED, "step", 1.0, f"round {i}/10") for i in range(1, 11)]
    outcome, tail, shown = ChildOutcome(None, None), collections.deque(), io.StringIO()
    relay_output(lines, outcome, tail, shown, progress_token="a1b2")
    assert shown.getvalue() == ""
    assert outcome.phase is Phase.TIMED and outcome.doing == "round 10/10"
