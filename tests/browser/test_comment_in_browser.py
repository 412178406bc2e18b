"""The PR comment as a reader meets it: cmark-gfm (GitHub's renderer), GitHub's markdown
stylesheet and headless Chromium in a 780 px conversation column (render_comment.py).

For the committed example, a 2-version × 3-step failing run, a run full of hostile strings and
a run set over GitHub's size limit, closed and with every <details> open: no table is wider
than the column, and the first screen (before the first <details>) names every failing and
inconclusive row. Without Chromium the tests skip, loudly; REQUIRE_BROWSER=1 (CI) makes that
a failure. `make browser-env` installs Chromium.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from render_comment import STYLESHEET, find_chromium, render
from report_runs import (
    failing_rows,
    hostile,
    nanogpt_graph_break,
    oversized,
    two_by_three,
    two_versions_failing,
    with_history,
)
from test_comment_word_language_model import LOCATION, word_language_model

from compilegate.gate.documents import read_document
from compilegate.gate.run_set import RunSetVerdict, find_results, judge_run_set
from compilegate.report.comment import render_comment
from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.browser
EXAMPLE = REPO_ROOT / "examples" / "report"
STYLESHEET_SHA256 = "de2d14b5290b8cf2af74c95e92560d9c00642ae72de0b856cece3e4eddb2d885"
METRIC_WORDS = {
    "compile_s": "compile time (wall)",
    "compile_cpu_s": "compile time (CPU)",
    "speedup": "speedup vs eager",
    "eager_step_ms": "eager step time",
    "compiled_step_ms": "compiled step time",
    "eager_step_ms_p25": "eager step time, 25th percentile",
    "compiled_step_ms_p25": "compiled step time, 25th percentile",
    "graph_break_sites": "graph breaks",
    "recompiles": "recompiles",
    "numerics": "numerics",
    "fallbacks_to_eager": "fallbacks to eager",
    "peak_bytes": "peak memory",
}


@pytest.fixture(scope="module", autouse=True)
def chromium() -> None:
    if find_chromium() is None:
        message = "no Chromium: the comment was not rendered (apt-get install -y chromium)"
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(message + "; REQUIRE_BROWSER=1")
        pytest.skip("SKIPPED LOUDLY: " + message)


def example_run_set() -> RunSetVerdict:
    baseline = read_document(EXAMPLE / "baseline.json", role="baseline")
    sources = find_results([], EXAMPLE / "results")
    return judge_run_set(sources, baseline, "examples/report/baseline.json")


MAKERS = {
    "2 × 3 failing": two_by_three,
    "hostile": hostile,
    "oversized": oversized,
    "stored history": with_history,
    "two versions failing": two_versions_failing,
    "nanoGPT graph break": nanogpt_graph_break,
    "word language model": word_language_model,
    "word language model, hostile": lambda docs: word_language_model(docs, hostile=True),
}
# Issue 31: the two-version stored-baseline failure, every <details> closed, in the 780 px
# column (2182 px on nanoGPT before; 1983 px for two_versions_failing, 1298 px after,
# with the accept label's sentence).
TWO_VERSIONS_CLOSED_MAX_PX = 1400
# The real nanoGPT run (tests/unit/data/nanogpt/): 1601 px closed before its three failures
# alike on both variants were said once (tests/unit/report/test_comment_nanogpt.py), 1046 px after;
# 1094 px with the accept label (its sentence and the baseline command's one blockquote).
NANOGPT_CLOSED_MAX_PX = 1100
# Issue 40's word-language-model screens (tests/unit/report/test_comment_word_language_model.py):
# the two-version run 1703 px closed before, 1607 px after; on an unsteady machine with a
# hostile failure 2026 px before (a 6-line run health, a 160-character reason in a cell),
# 1679 px after. The new break's file:line within the first 780 px of either.
# Issue 40 item 8 (bench/comment_heights.py): 1567 and 1615 px once the first screen said
# nothing twice (context in one paragraph, a reason's place left to its table row, a row's
# place blank under the same place, `❌ fails` unbroken, `compiled vs eager (best)`).
WLM_CLOSED_MAX_PX = 1600
# Issue 54 finding 6: a failing upgrade also says, closed, what else it changed (one line of
# summary: the hostile variant's speed and eager step time moved beyond their noise): 1655.
WLM_HOSTILE_CLOSED_MAX_PX = 1690
# The hostile run (report_runs.hostile: a graph break, recompile and failed run whose
# reasons are the hostile string): 1442 px closed before issue 40 item 8, 1378 px after.
HOSTILE_CLOSED_MAX_PX = 1400
FIRST_VIEW_PX = 780


def case(name: str, tmp_path: Path) -> tuple[str, RunSetVerdict]:
    if name == "committed example":
        return (EXAMPLE / "comment.md").read_text(encoding="utf-8"), example_run_set()
    run_set = MAKERS[name](tmp_path / "docs")
    return render_comment(run_set), run_set


def test_the_vendored_stylesheet_is_the_one_recorded():
    assert hashlib.sha256(STYLESHEET.read_bytes()).hexdigest() == STYLESHEET_SHA256


@pytest.mark.parametrize(
    "name",
    [
        "committed example",
        "2 × 3 failing",
        "hostile",
        "oversized",
        "stored history",
        "two versions failing",
        "nanoGPT graph break",
        "word language model",
        "word language model, hostile",
    ],
)
def test_tables_fit_and_the_first_screen_names_every_failing_row(name: str, tmp_path: Path):
    markdown, run_set = case(name, tmp_path)
    closed = render(markdown, tmp_path / "closed.png")
    opened = render(markdown, tmp_path / "open.png", expand=True)
    assert closed["column_px"] >= 740  # the 780 px column, less its padding
    for seen in (closed, opened):
        wide = [t for t in seen["tables"] if t["overflows"]]
        assert not wide, f"{name}: {len(wide)} table(s) wider than the column: {wide}"
    screen = " ".join(closed["first_screen_text"].split())
    assert screen, "nothing before the first <details>"
    for version, row in failing_rows(run_set):
        torch = (version.torch or version.label).split("+")[0]
        step = " ".join(row.step.split())[:20]
        what = METRIC_WORDS.get(row.metric, row.metric.replace("_", " "))
        if row.metric in ("step", "variant"):
            what = {"error": "failed to run"}.get(row.verdict, row.verdict)
        assert torch in screen and step in screen and what in screen, (name, torch, step, what)


def test_a_two_version_failure_fits_1400_px_closed_with_its_reasons_on_the_first_screen(
    tmp_path: Path,
):
    markdown = render_comment(two_versions_failing(tmp_path / "docs"))
    closed = render(markdown, tmp_path / "closed.png")
    assert closed["height_px"] <= TWO_VERSIONS_CLOSED_MAX_PX, closed["height_px"]
    screen = " ".join(closed["first_screen_text"].split())
    assert "model.py:181" in screen and "Unsupported Tensor.item() call" in screen
    assert screen.count("run health") == 1 and screen.count("compilegate baseline update") == 1


def test_the_real_nanogpt_failure_fits_1100_px_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Relative paths in its accept command, as the action's are (a long temporary folder
    # would add a line of command that no reader meets).
    monkeypatch.chdir(tmp_path)
    markdown = render_comment(nanogpt_graph_break(Path("docs")))
    closed = render(markdown, tmp_path / "closed.png")
    assert closed["height_px"] <= NANOGPT_CLOSED_MAX_PX, closed["height_px"]
    screen = " ".join(closed["first_screen_text"].split())
    assert "Fails (3), all in gpt · default; default, dynamic" in screen
    assert screen.count("Unsupported Tensor.item() call") == 1


def test_the_hostile_failure_fits_1400_px_closed_with_each_reason_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    markdown = render_comment(hostile(Path("docs")))
    closed = render(markdown, tmp_path / "closed.png")
    assert closed["height_px"] <= HOSTILE_CLOSED_MAX_PX, closed["height_px"]
    screen = " ".join(closed["first_screen_text"].split())
    # the hostile step is named in the headline, its versions row and its first failing row
    assert screen.count("</scrip · default") == 1
    assert "new graph break at train/model.py:21" in screen


@pytest.mark.parametrize(
    ("hostile", "max_px"), [(False, WLM_CLOSED_MAX_PX), (True, WLM_HOSTILE_CLOSED_MAX_PX)]
)
def test_the_word_language_model_comment_shows_its_new_break_in_the_first_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile: bool, max_px: int
):
    monkeypatch.chdir(tmp_path)
    markdown = render_comment(word_language_model(Path("docs"), hostile=hostile))
    closed = render(markdown, tmp_path / "closed.png")
    assert closed["height_px"] <= max_px, closed["height_px"]
    screen = closed["first_screen_text"]
    # the new break's file:line is in the versions table, above the rows needing a look
    assert screen.index("model.py:144") < screen.index("Fails (")
    # what comes before it fits the first view: the headline, health, context, one table row
    before = markdown.split("model.py:144", 1)[0]
    cut = render(before, tmp_path / "before.png")
    assert cut["height_px"] <= FIRST_VIEW_PX, cut["height_px"]
    if hostile:
        assert LOCATION in " ".join(screen.split())
