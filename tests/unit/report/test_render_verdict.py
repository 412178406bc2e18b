"""`compilegate compare` as text, markdown and JSON: the same report as `compilegate report` and
the PR comment, for one result (see test_report_first_screen.py for the first screen)."""

from __future__ import annotations

import io

from gate_docs import environment, judge_documents, result, site, step, variant

from compilegate.report.judge_and_render import (
    compare_and_report,
    one_version_run_set,
    render_report,
)
from compilegate.results.model import parse


def mixed():
    """One regression (new graph break), one inconclusive speedup, the rest pass."""
    baseline = result(
        step("noisy", variants=[variant(speedup=1.25, noise_pct=8.0)]),
        step("tidy"),
    )
    current = result(
        step("noisy", variants=[variant(speedup=1.125, noise_pct=8.0)]),
        step("tidy", variants=[variant(sites=[site("model.py", 42, "Data-dependent branching")])]),
        env=environment(torch="2.11.0"),
    )
    return baseline, current


def rendered(fmt: str, paths=("out/result.json", ".compilegate/base line.json")) -> str:
    baseline, current = mixed()
    report = judge_documents(baseline, current).with_paths(*paths)
    return render_report(
        report,
        fmt,
        one_version_run_set(
            report, parse(current, "result.json"), parse(baseline, "b.json", "baseline"), paths
        ),
    )


def test_text_starts_with_the_headline_and_lists_failing_rows_first():
    text = rendered("table")
    assert text.startswith("❌ compilegate fails on graph breaks only in tidy on torch 2.11.0;")
    attention = text.split("Fails (1), needs a look (1):")[1].split("\n\n")[0]
    rows = [
        line
        for line in attention.splitlines()[1:]
        if line.startswith("  tidy") or line.startswith("  noisy")
    ]
    assert "❌ graph breaks" in rows[0] and "⚠️ speedup vs eager" in rows[1]
    assert "- tidy · default: new graph break at model.py:42: Data-dependent branching" in text


def test_an_inconclusive_row_shows_value_change_threshold_and_noise():
    text = rendered("table")
    row = next(line for line in text.splitlines() if "⚠️ speedup vs eager" in line)
    assert "1.2× → 1.1×" in row and "−10 %" in row and "−5 %" in row and "±11 %" in row
    assert "inside the noise: the job does not fail on it" in " ".join(text.split())
    # its noise is the two runs' own: a rerun with more processes narrows it
    assert "rerun with more processes or iterations to decide" in " ".join(text.split())


def test_a_failure_names_the_command_that_refreshes_the_baseline():
    command = (
        "compilegate baseline update --result out/result.json "
        "--baseline '.compilegate/base line.json'"
    )
    assert f"  {command}" in rendered("table").splitlines()
    assert f"`{command}`" in rendered("markdown")


def test_a_passing_or_erroring_run_shows_no_refresh_command():
    passing = judge_documents(result(), result()).with_paths("r.json", "b.json")
    assert passing.failing_refresh_command is None
    text = render_report(
        passing,
        "table",
        one_version_run_set(
            passing, parse(result(), "r.json"), parse(result(), "b.json", "baseline"), None
        ),
    )
    assert "baseline update" not in text
    assert text.startswith("compilegate passes: step speed, compile time, graph breaks")
    broken = result(step(variants=[variant(status="error", error="boom")]))
    erroring = judge_documents(result(), broken).with_paths("r.json", "b.json")
    assert erroring.exit_code == 3 and erroring.failing_refresh_command is None


def test_markdown_is_the_comment_and_json_the_verdicts():
    markdown = rendered("markdown")
    assert markdown.startswith("### ❌ compilegate fails on graph breaks only")
    assert "<details><summary>torch 2.11.0: every gate row</summary>" in markdown
    assert '"overall": "regression"' in rendered("json")


def test_markdown_escapes_what_user_code_wrote():
    hostile = (
        "a | b in <lambda> ![x](http://evil.example/p.png) [click](http://evil.example) @org/team"
    )
    baseline = parse(result(step(variants=[variant()])), "b.json", "baseline")
    current = result(step(variants=[variant(status="error", error=hostile)]))
    stream = io.StringIO()
    code = compare_and_report(baseline, current, None, stream, fmt="markdown", result_path="r.json")
    text = stream.getvalue()
    assert code == 3
    assert "a \\| b in &lt;lambda&gt;" in text
    assert "![x](" not in text and "[click](" not in text and "@org/team" not in text
