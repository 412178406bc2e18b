"""What compilegate prints cannot become a workflow command (workflow_log.py, issue 29): lines
written in any pieces are defused at the stream; compilegate's own annotations pass, intact,
through the one explicit channel; the CLI defuses its whole run and gives the streams back."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from compilegate.cli import main
from compilegate.github import ActionsContext, Annotation, publish
from compilegate.run.workflow_log import DefusedStream, defused_output, write_command

# The runner's grammar (tests/integration/actions_runner.workflow_commands, kept short here):
# lines end at LF, CR or CRLF; `::` after leading white space, or `##[…]` anywhere.
_READ_LINE = re.compile(r"\r\n|\r|\n")


def commands(output: str) -> list[str]:
    return [
        line
        for line in _READ_LINE.split(output)
        if (line.lstrip().startswith("::") and "::" in line.lstrip()[2:])
        or re.search(r"##\[[^\]]*\]", line)
    ]


def defused(*pieces: str) -> str:
    raw = io.StringIO()
    stream = DefusedStream(raw)
    for piece in pieces:
        stream.write(piece)
    stream.finish()
    return raw.getvalue()


@pytest.mark.parametrize(
    "pieces",
    [
        ("::add-mask::REGRESSION\n",),
        ("  ::stop-commands::token\n",),
        ("report line\n", "    ::error file=a.py,line=1::forged\n"),
        ("fine\r::notice::after a carriage return\n",),
        ("\u00a0::add-mask::after a no-break space\n",),
        ("loss 0.1 ##[warning]legacy\n",),
        (":", ":add-mask::split across writes\n"),
        ("##", "[group]split across writes\n"),
        ("no newline at the end ::x:: ", "then\n::add-mask::x"),
    ],
)
def test_no_line_written_in_any_pieces_is_a_command(pieces: tuple[str, ...]) -> None:
    out = defused(*pieces)
    assert commands(out) == []
    assert "".join(pieces).count("\n") == out.count("\n")


def test_ordinary_text_passes_unchanged() -> None:
    text = "step gate (cpu): eager 4.2 ms/step\n  speedup 1.3× (a::b, 50 %)\n"
    assert defused(text) == text


def test_our_own_annotation_passes_intact_on_a_line_of_its_own() -> None:
    raw = io.StringIO()
    stream = DefusedStream(raw)
    note = Annotation("error", "new graph break: ::add-mask::x\n::error::y", "m.py", 3, "t")
    stream.write("a line not yet ended")
    write_command(stream, note.format_workflow_command())
    stream.finish()
    assert commands(raw.getvalue()) == [note.format_workflow_command()]
    assert raw.getvalue().startswith("a line not yet ended\n::error file=m.py,line=3")


def test_the_command_channel_takes_one_command_line_only() -> None:
    stream = DefusedStream(io.StringIO())
    for bad in ("not a command", "::warning::a\n::add-mask::b", "::notice::a\rb"):
        with pytest.raises(ValueError):
            stream.command(bad)


def test_publish_prints_its_annotations_and_nothing_else_a_pull_request_wrote(
    tmp_path: Path,
) -> None:
    context = ActionsContext(
        repository="o/r",
        event_name="push",
        sha="c" * 40,
        api_url="https://api.example",
        server_url="https://git.example",
        step_summary_path=tmp_path / "summary.md",
        output_path=tmp_path / "output",
        run_id="9",
        pull_request=None,
        token=None,
    )
    notes = [Annotation("warning", "graph break: ::add-mask::x", "m.py", 1, "compilegate")]
    raw = io.StringIO()
    publish(
        context,
        None,
        markdown="## report",
        comment_key="compilegate",
        annotations=notes,
        verdict="pass",
        report_path="::add-mask::out/result.json\n::group::x",
        dry_run=False,
        stream=DefusedStream(raw),
    )
    assert commands(raw.getvalue()) == [notes[0].format_workflow_command()]


def test_the_cli_defuses_its_streams_and_gives_them_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = sys.stdout, sys.stderr
    code = main(["run", "--config", "missing.yml\n::add-mask::REGRESSION\n##[group]x"])
    assert (sys.stdout, sys.stderr) == before
    captured = capsys.readouterr()
    assert code == 2 and "add-mask" in captured.err
    assert commands(captured.out + captured.err) == []


def test_defused_output_wraps_once_and_restores() -> None:
    saved = sys.stdout, sys.stderr
    with defused_output():
        assert isinstance(sys.stdout, DefusedStream) and isinstance(sys.stderr, DefusedStream)
        inner = sys.stdout
        with defused_output():
            assert sys.stdout is inner
    assert (sys.stdout, sys.stderr) == saved
