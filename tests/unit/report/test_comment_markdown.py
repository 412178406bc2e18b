"""The PR comment, rendered by GitHub's own markdown renderer (cmark-gfm) and checked as HTML:
tables keep their columns, <details> close, hostile strings from user code stay inert, and a
large run set stays under GitHub's 65,536-character limit."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from gate_docs import environment, result, site, step, variant
from report_runs import HOSTILE
from report_runs import hostile as hostile_run_set

from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.comment import COMMENT_LIMIT_CHARS, render_comment
from compilegate.report.links import LinkContext
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.verdict_json import run_set_json
from compilegate.results.model import parse as document

cmarkgfm = pytest.importorskip("cmarkgfm")
from cmarkgfm.cmark import Options  # noqa: E402

LINKS = LinkContext("https://git.example", "acme/trainer", "0123456789abcdef")


def render_html(markdown: str) -> str:
    # UNSAFE keeps our own <details>; GitHub allows them. Hostile text must not need a filter.
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.closed: list[str] = []
        self.rows: list[int] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self._cells = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self._cells = 0
        if tag in ("td", "th"):
            self._cells += 1
        if tag == "a":
            self.links.append(dict(attrs).get("href", ""))

    def handle_endtag(self, tag):
        self.closed.append(tag)
        if tag == "tr":
            self.rows.append(self._cells)

    def handle_data(self, data):
        self.text.append(data)


def parse(markdown: str) -> Html:
    parser = Html()
    parser.feed(render_html(markdown))
    return parser


def write(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def run_set(tmp_path: Path, baseline: dict | None, **results: dict):
    sources = [
        ResultSource(write(tmp_path / name / "result.json", doc), name)
        for name, doc in results.items()
    ]
    if baseline is None:
        return judge_run_set(sources, None)
    return judge_run_set(sources, document(baseline, "baseline.json", "baseline"), "baseline.json")


def test_hostile_strings_stay_inert(tmp_path: Path):
    markdown = render_comment(hostile_run_set(tmp_path), links=LINKS)
    html = render_html(markdown)
    parsed = parse(markdown)
    assert HOSTILE.split()[0] in "".join(parsed.text)  # shown, as text
    assert "<script" not in html and "<img" not in html
    assert "@octo-org/team" not in "".join(parsed.text)  # a joiner breaks the mention
    assert not any("evil" in href for href in parsed.links), parsed.links
    assert parsed.tags.count("details") == parsed.closed.count("details") >= 3
    assert "h1" not in parsed.tags and "h2" not in parsed.tags
    # every table row has as many cells as its header (4: what an upgrade changed): no cell
    # was split by a `|`
    assert len(set(parsed.rows)) > 1 and all(n in (4, 6, 7, 8) for n in parsed.rows), parsed.rows


def test_in_repo_sites_link_to_the_head_commit(tmp_path: Path):
    current = result(step(variants=[variant(sites=[site("src/model.py", 42, "print")])]))
    markdown = render_comment(run_set(tmp_path, None, **{"torch-2.13.0": current}), links=LINKS)
    assert "https://git.example/acme/trainer/blob/0123456789abcdef/src/model.py#L42" in (
        parse(markdown).links
    )


def test_marker_headline_and_one_row_per_version(tmp_path: Path):
    baseline = result(step(variants=[variant(speedup=1.25)]))
    slower = result(step(variants=[variant(speedup=0.95)]), env=environment(torch="2.13.0"))
    same = result(step(variants=[variant(speedup=1.25)]), env=environment(torch="2.12.0"))
    markdown = render_comment(
        run_set(tmp_path, baseline, **{"torch-2.13.0": slower, "torch-2.12.0": same}),
        marker="<!-- compilegate: nightly -->",
    ).replace("\u00a0", " ")  # the no-break space between a number and its unit
    lines = markdown.splitlines()
    assert lines[0] == "<!-- compilegate: nightly -->"
    assert lines[1].startswith(
        "### ❌ compilegate fails on step speed only in train on torch 2.13.0"
    )
    version_rows = [line for line in lines if line.startswith("| 2.1")]
    assert version_rows[0].startswith("| 2.12.0 | train | pass | - |")
    assert version_rows[1].startswith("| 2.13.0 | train | ❌ fails | speedup vs eager |")
    assert "| train · default | ❌ speedup vs eager | 1.25× → 0.95× | −24.0 % | −5 % |" in markdown


def test_a_missing_version_is_a_row_with_its_error(tmp_path: Path):
    (tmp_path / "torch-9.9.9").mkdir()
    (tmp_path / "torch-9.9.9" / "error.txt").write_text(
        "pip: no matching distribution for torch==9.9.9\n"
    )
    ok = write(tmp_path / "torch-2.13.0" / "result.json", result())
    sources = [
        ResultSource(ok, "torch-2.13.0"),
        ResultSource(tmp_path / "torch-9.9.9" / "result.json", "torch-9.9.9"),
    ]
    verdict = judge_run_set(
        sources, document(result(), "baseline.json", "baseline"), "baseline.json"
    )
    markdown = render_comment(verdict)
    # the gate's icon and word kept on one line (a no-break space)
    row = "| 9.9.9 | - | ❌\u00a0error | pip: no matching distribution for torch==9.9.9 |"
    assert row in markdown
    assert markdown.splitlines()[0].startswith(
        "### ❌ compilegate fails: the run failed on torch 9.9.9"
    )
    assert verdict.exit_code == 3


def test_a_version_without_a_document_or_an_error_file_says_where_it_looked(tmp_path: Path):
    """No result and nothing saying why: the comment, the terminal and the JSON name the
    path the document was expected at (report/wording.version_error)."""
    ok = write(tmp_path / "torch-2.13.0" / "result.json", result())
    gone = tmp_path / "torch-9.9.9" / "result.json"
    sources = [ResultSource(ok, "torch-2.13.0"), ResultSource(gone, "torch-9.9.9")]
    verdict = judge_run_set(
        sources, document(result(), "baseline.json", "baseline"), "baseline.json"
    )
    said = f"no result document at {gone}"
    assert "| 9.9.9 | - | ❌\u00a0error | no result document at /" in render_comment(verdict)
    assert f"error: {said}" in " ".join(render_run_set_text(verdict).split())
    assert run_set_json(verdict)["versions"][1]["error"] == said
    assert verdict.exit_code == 3


def test_ten_versions_by_twenty_steps_stay_under_the_cap(tmp_path: Path):
    steps = [step(f"step{i}", variants=[variant(), variant("max-autotune")]) for i in range(20)]
    results = {
        f"torch-2.{v}.0": result(*steps, env=environment(torch=f"2.{v}.0")) for v in range(10)
    }
    markdown = render_comment(run_set(tmp_path, result(*steps), **results), links=LINKS)
    assert len(markdown) < COMMENT_LIMIT_CHARS
    markdown = markdown.replace("\u00a0", " ")
    first_screen = markdown.split("<details>")[0]
    assert all(f"| 2.{v}.0 | 20 steps | pass |" in first_screen for v in range(10))


def test_an_oversized_report_drops_sections_in_order_and_says_so(tmp_path: Path):
    long_reason = "graph break " * 40
    steps = [
        step(
            f"s{i}", variants=[variant(sites=[site(f"m{j}.py", j, long_reason) for j in range(20)])]
        )
        for i in range(40)
    ]
    results = {
        f"torch-2.{v}.0": result(*steps, env=environment(torch=f"2.{v}.0")) for v in range(10)
    }
    markdown = render_comment(run_set(tmp_path, result(*steps), **results), links=LINKS)
    assert len(markdown) < COMMENT_LIMIT_CHARS
    markdown = markdown.replace("\u00a0", " ")
    assert "Shortened to stay under GitHub's 65,536-character limit" in markdown
    first_screen = markdown.split("<details>")[0]
    assert all(f"| 2.{v}.0 | 40 steps |" in first_screen for v in range(10))  # never dropped
    parsed = parse(markdown)
    assert parsed.tags.count("details") == parsed.closed.count("details")


def test_the_stored_runs_trend_is_a_mermaid_chart_per_step(tmp_path):
    """Issue 22: the comment shows the main metrics over the default branch's stored runs
    and this run, as a Mermaid chart GitHub renders, each line named under it."""
    from report_runs import with_history

    markdown = render_comment(with_history(tmp_path / "docs", stored_runs=6))
    charts = re.findall(r"```mermaid\n(.*?)\n```", markdown, flags=re.S)
    assert len(charts) == 3  # transformer, mlp, gpt
    first = charts[0].splitlines()
    assert first[1] == "xychart-beta"
    # Mermaid's directive is JSON after `init:`; an unbalanced brace drops the colours the
    # legend names (drawn by Mermaid in Chromium: tests/browser/test_mermaid_in_browser.py)
    directive = json.loads(first[0].removeprefix("%%{init: ").removesuffix("}%%"))
    palette = directive["themeVariables"]["xyChart"]["plotColorPalette"]
    assert palette.split(", ")[:3] == ["#1f77b4", "#ff7f0e", "#2ca02c"]
    assert '"this run"' in charts[0] and charts[0].count('", "') == 6
    lines = [line for line in first if line.strip().startswith("line [")]
    assert len(lines) == 3  # eager, default, default+step
    assert all(len(line.split(",")) == 7 for line in lines)
    assert "blue: eager (7 runs) · orange: default compiled (7 runs)" in markdown
    assert "<summary>torch 2.13.0+cpu: step times over the stored runs</summary>" in markdown


def test_no_trend_without_a_stored_history(tmp_path):
    from report_runs import two_by_three

    assert "```mermaid" not in render_comment(two_by_three(tmp_path / "docs"))
