"""Issue 31, "the comment": a stored-baseline failure on two torch versions says each thing
once — rows that fail alike on both, the run health, the way to accept the change — puts
each failing row's reason on the first screen, names compile work as what failed, and shows
quoted code as code while hostile strings stay inert. Rendered by cmark-gfm (GitHub's
markdown) where what the reader sees matters. The comment's height is measured in a browser
(tests/browser)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from gate_docs import environment, result, step, variant
from report_runs import ITEM_REASON, judge, two_by_three, two_versions_failing

from compilegate.report.comment import render_comment
from compilegate.report.escape import code_span, with_code
from compilegate.report.links import LinkContext

cmarkgfm = pytest.importorskip("cmarkgfm")
from cmarkgfm.cmark import Options  # noqa: E402

LINKS = LinkContext("https://git.example", "acme/nanogpt", "0123456789abcdef")
HOSTILE_CODE = (
    "x | y \\| z </details> <script>alert(1)</script> @octo-org/team #12 GH-3 "
    "``` `tick` ``double`` [click](https://evil.example) www.evil.example ::error::pwned"
)


def html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Parsed(HTMLParser):
    """Tags, links, code spans' text and table rows' cell counts of rendered markdown."""

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []
        self.code: list[str] = []
        self.cells: list[int] = []
        self._in_code = False
        self.feed(html(markdown))

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag == "code":
            self._in_code = True
            self.code.append("")
        if tag == "tr":
            self.cells.append(0)
        if tag == "td":
            self.cells[-1] += 1

    def handle_endtag(self, tag):
        if tag == "code":
            self._in_code = False

    def handle_data(self, data):
        if self._in_code:
            self.code[-1] += data


def first_screen(markdown: str) -> str:
    return markdown.replace("\u00a0", " ").split("<details>", 1)[0]


@pytest.fixture
def comment(tmp_path: Path) -> str:
    return render_comment(two_versions_failing(tmp_path), links=LINKS)


def test_a_row_that_fails_alike_on_both_versions_is_said_once_with_both(comment: str):
    screen = first_screen(comment)
    assert screen.count("❌ graph breaks |") == 1
    assert "| 2.9.1, 2.10.0 | ❌ graph breaks | 0 → 1 | +1 | +0 | - |" in screen
    assert "| 2.9.1, 2.10.0 | ❌ fallbacks to eager |" in screen
    # rows that differ stay apart: each version's own speedup, compile work on one version
    assert "| 2.9.1 | ❌ speedup vs eager | 1.30× → 1.10× |" in screen
    assert "| 2.10.0 | ❌ speedup vs eager | 1.30× → 1.12× |" in screen
    assert "| 2.10.0 | ❌ compile work | FX nodes 408 → 444 | +8.8 % |" in screen
    assert "**Fails (5)**, all in gpt · default" in screen


def test_run_health_and_the_way_to_accept_are_said_once(comment: str):
    screen = first_screen(comment)
    assert screen.count("run health") == 1
    assert "run health (torch 2.9.1 and 2.10.0): the machine was unsteady" in screen
    assert screen.count("Step times reported, not judged") == 1
    # two lines of the comment at most: each cause in full is under "Reading these numbers"
    (line,) = [line for line in screen.splitlines() if "run health" in line]
    assert len(line) <= 200, line
    assert "load average 3.4 on 2 cores" in comment.split("Reading these numbers", 1)[1]
    assert screen.count("compilegate baseline update") == 1
    assert "with the result on torch 2.10.0 (the baseline's torch)" in screen
    assert "torch-2.10.0/result.json" in screen and "torch-2.9.1/result.json" not in screen


def test_the_graph_break_s_file_line_and_torch_s_reason_are_on_the_first_screen(comment: str):
    screen = first_screen(comment)
    parsed = Parsed(screen)
    assert "https://git.example/acme/nanogpt/blob/0123456789abcdef/model.py#L181" in parsed.links
    assert "Unsupported Tensor.item() call with capture\\_scalar\\_outputs=False" in screen
    # torch's quoted code renders as code, not as backticks
    assert "torch._dynamo.config.capture_scalar_outputs = True" in parsed.code
    assert "torch.cond" in parsed.code
    # the table's one compile-work row says where (all in gpt · default): the reason, when
    assert "**compile work** (torch 2.10.0): FX nodes 408 → 444" in screen


def test_the_headline_names_compile_work_and_not_compile_time(comment: str):
    headline = comment.splitlines()[0]
    # each kind with the versions it failed on: compile work on the baseline's torch only;
    # the failing fallbacks to eager named beside the graph breaks (issue 54, finding 10)
    assert headline.startswith(
        "### ❌ compilegate fails in gpt: step speed, graph breaks and fallbacks to eager on "
        "torch 2.9.1 and 2.10.0, compile work on torch 2.10.0 only;"
    )
    failing = headline.split(";")[0]
    assert "compile time" not in failing
    assert "compile time, recompiles, numerics, memory unchanged" in headline


def test_the_machine_is_blamed_only_when_every_failing_row_is_timed(tmp_path: Path):
    """Both runs measured the baseline's commit; one failed on a graph break and a count,
    which no machine moves."""
    failing_code = render_comment(two_versions_failing(tmp_path / "a"))
    assert "what moved is the machine" not in failing_code
    only_timed = render_comment(two_by_three(tmp_path / "b"))
    assert "what moved is the machine, not the code" in first_screen(only_timed)


def test_the_small_print_is_closed_and_each_version_is_one_line(comment: str):
    screen = first_screen(comment)
    assert "Compiled vs eager:" not in screen and "<sub>" not in screen
    summaries = re.findall(r"^<details><summary>(.*?)</summary>", comment, flags=re.M)
    assert summaries[0] == "Reading these numbers"
    outer = [s for s in summaries if s.endswith("reproduce")]
    assert outer == [
        "torch 2.9.1+cpu: variants, gate rows, graph breaks, recompiles, environment, reproduce",
        "torch 2.10.0+cpu: variants, gate rows, graph breaks, recompiles, environment, reproduce",
    ]
    assert comment.count("<details>") == comment.count("</details>")


@pytest.mark.parametrize("text", [HOSTILE_CODE, "`", "``", "a`", "`a", " `x` ", "\\", "a\\|b"])
def test_a_code_span_keeps_any_string_literal_and_inert(text: str):
    expected = " ".join(text.split())
    for markdown in (
        f"see {code_span(text)} here",
        f"| a |\n|---|\n| {code_span(text, in_table=True)} |",
    ):
        parsed = Parsed(markdown)
        # a word joiner (invisible) may keep a backslash off an escaped pipe in a table
        assert [c.replace("\u2060", "") for c in parsed.code] == [expected], markdown
        assert "a" not in parsed.tags and "script" not in parsed.tags
        assert "details" not in parsed.tags and "img" not in parsed.tags
    table = Parsed(f"| a | b |\n|---|---|\n| {code_span(text, in_table=True)} | 2 |")
    assert [n for n in table.cells if n] == [2]  # no `|` of the text ended the cell


def test_quoted_code_in_a_hostile_message_stays_inert():
    message = f"{ITEM_REASON} {HOSTILE_CODE}\n::warning file=x::pwned `@team #7`"
    markdown = with_code(message)
    parsed = Parsed(f"- {markdown}")
    assert "\n" not in markdown  # a line of its own could be a workflow command or a block
    assert not parsed.links and "script" not in parsed.tags and "details" not in parsed.tags
    assert "torch.cond" in parsed.code and "@team #7" in parsed.code
    text = re.sub(r"<[^>]+>", "", html(markdown))
    assert "@octo-org" not in text and "#12" not in text  # mentions and references broken


def _unsteady(document: dict, reason: str) -> dict:
    document["run_health"] = {"machine": {}, "unsteady": [reason]}
    return document


def test_unlike_health_is_one_paragraph_naming_each_version_s_reasons(tmp_path: Path):
    busy, drift = "other processes took 61 % of its CPU", "the yardstick drifted 40 %"
    run_set = judge(
        tmp_path,
        result(step(variants=[variant(speedup=1.3)]), env=environment(torch="2.13.0")),
        **{
            "torch-2.9.1": _unsteady(
                result(step(variants=[variant(speedup=1.0)]), env=environment(torch="2.9.1")),
                busy,
            ),
            "torch-2.10.0": _unsteady(
                result(step(variants=[variant(speedup=1.0)]), env=environment(torch="2.10.0")),
                drift,
            ),
        },
    )
    screen = first_screen(render_comment(run_set))
    assert screen.count("run health") == 1 and screen.count("Step times reported") == 1
    assert f"unsteady — torch 2.9.1: {busy}; torch 2.10.0: {drift}." in screen
    # no version on the baseline's torch (2.13.0): the newest version's result
    assert screen.count("compilegate baseline update") == 1
    assert "with the result on torch 2.10.0:" in screen
