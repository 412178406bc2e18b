"""Issue 29 item 7: strings from user code in the PR comment link no issue or pull request and
reorder no text. The comment is rendered by cmark-gfm (GitHub's markdown) and its text nodes
searched the way GitHub's reference filter searches them; no bidi control survives."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from gate_docs import environment, recompile, result, site, step, variant
from report_runs import judge

from compilegate.report.comment import render_comment
from compilegate.report.escape import cell, inert
from compilegate.report.links import LinkContext

cmarkgfm = pytest.importorskip("cmarkgfm")
from cmarkgfm.cmark import Options  # noqa: E402

REFERENCES = "fixes #123, see acme/trainer#7 and GH-42 (gh-9), owner#5"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
HOSTILE = f"{REFERENCES} access\u202e}} ;)level(\u2066 {BIDI}"

# GitHub's autolinked references in text (docs: "Autolinked references and URLs"): `#26`,
# `GH-26`, `owner/repo#26` (and `owner#26`), not inside a word.
ISSUE_REFERENCE = re.compile(r"(?<![\w/#])(?:[\w.-]+/[\w.-]+|[\w-]+)?#\d+\b|\bGH-\d+\b", re.I)
BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class Text(HTMLParser):
    """Text outside code, links and HTML attributes: where GitHub looks for references."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("code", "pre", "a")

    def handle_endtag(self, tag):
        self._skip -= tag in ("code", "pre", "a")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def rendered_text(markdown: str) -> str:
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    parser = Text()
    parser.feed(html)
    return "".join(parser.parts)


def test_the_pattern_finds_what_github_links() -> None:
    assert ISSUE_REFERENCE.findall(REFERENCES) == [
        "#123",
        "acme/trainer#7",
        "GH-42",
        "gh-9",
        "owner#5",
    ]


@pytest.mark.parametrize("escape", [inert, cell])
def test_no_reference_or_bidi_control_survives_escaping(escape) -> None:
    text = rendered_text(escape(HOSTILE))
    assert ISSUE_REFERENCE.findall(text) == []
    assert BIDI_CONTROL.findall(text) == []
    assert "[U+202E]" in text and "acme/trainer#" in text  # shown, defused, not dropped


def test_the_whole_comment_links_no_reference_and_reorders_nothing(tmp_path: Path) -> None:
    noisy = variant(
        speedup=0.95,
        sites=[site("train/model.py", 21, HOSTILE)],
        recompile_events=[recompile(reason=HOSTILE, function="forward")],
        numerics="fail",
        failed_tensors=["w"],
    )
    noisy["numerics"]["reason"] = HOSTILE
    noisy["numerics"]["worst"] = [{"tensor": HOSTILE, "kind": "grad"}]
    bad = step("bad", variants=[noisy])
    bad["recommendation"] = {"variant": None, "text": HOSTILE}
    failed = step("broken", variants=[variant("default", status="error", error=HOSTILE)])
    current = result(bad, failed, env=environment(torch="2.13.0", commit=HOSTILE))
    run_set = judge(tmp_path, result(step("bad"), step("broken")), **{"torch-2.13.0": current})
    links = LinkContext("https://git.example", "acme/trainer", "0123456789abcdef")

    markdown = render_comment(run_set, links=links)
    text = rendered_text(markdown)

    assert "acme/trainer#" in text  # the strings are in the comment
    assert ISSUE_REFERENCE.findall(text) == []
    assert BIDI_CONTROL.findall(markdown) == []
