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
