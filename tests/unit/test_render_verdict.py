"""The verdict table and its markdown twin: headline first, regressions first."""

from __future__ import annotations

from gate_docs import environment, result, site, step, variant

from compilegate.gate.compare import compare_to_baseline
from compilegate.report.verdict_text import (
    HEADER,
    render_verdict_markdown,
    render_verdict_table,
    verdict_headline,
)


def mixed_report():
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
    return compare_to_baseline(baseline, current)


def test_table_starts_with_the_headline_and_lists_regressions_first():
    text = render_verdict_table(mixed_report())
    lines = text.splitlines()
    assert lines[0].startswith("compilegate: REGRESSION (exit 1): 1 regression, 1 inconclusive")
    header = next(i for i, line in enumerate(lines) if line.startswith("step "))
    assert lines[header].split() == list(HEADER)
    table = lines[header + 1 : lines.index("", header)]
    verdicts = [line.split()[-1] for line in table if not line.startswith("-")]
    assert verdicts[0] == "REGRESSION" and verdicts[1] == "INCONCLUSIVE"
    assert set(verdicts[2:]) == {"pass"}
    assert lines[-1].startswith("if this change is intended, accept it as the baseline")
    assert lines[-1].endswith("compilegate baseline update --result RESULT --baseline BASELINE")


def test_table_shows_values_threshold_noise_and_messages():
    text = render_verdict_table(mixed_report())
    row = next(line for line in text.splitlines() if "INCONCLUSIVE" in line)
    assert "1.25x" in row and "1.12x" in row and "-10.0 %" in row
    assert "5 %" in row and "±11.3 %" in row
    assert "- tidy/default: new graph break at model.py:42: Data-dependent branching" in text
    assert "torch 2.10.0+cu128 (baseline) vs 2.11.0 (this run)" in text


def test_inconclusive_headline_says_the_job_does_not_fail():
    baseline = result(step(variants=[variant(speedup=1.25, noise_pct=8.0)]))
    current = result(step(variants=[variant(speedup=1.125, noise_pct=8.0)]))
    headline = verdict_headline(compare_to_baseline(baseline, current))
    assert headline.startswith("compilegate: INCONCLUSIVE (exit 0)")
    assert "does not fail" in headline


def test_a_failure_names_the_command_that_refreshes_the_baseline():
    report = mixed_report().with_paths("out/result.json", ".compilegate/base line.json")
    command = (
        "compilegate baseline update --result out/result.json "
        "--baseline '.compilegate/base line.json'"
    )
    assert render_verdict_table(report).splitlines()[-1].endswith(command)
    assert render_verdict_markdown(report).splitlines()[-1].endswith(f"`{command}`")
    assert report.to_dict()["refresh_command"] == command


def test_a_passing_or_erroring_run_shows_no_refresh_command():
    passing = compare_to_baseline(result(), result()).with_paths("r.json", "b.json")
    assert passing.failing_refresh_command is None
    assert "baseline update" not in render_verdict_table(passing)
    broken = result(step(variants=[variant(status="error", error="boom")]))
    erroring = compare_to_baseline(result(), broken).with_paths("r.json", "b.json")
    assert erroring.exit_code == 3 and erroring.failing_refresh_command is None


def test_passing_rows_can_be_left_out():
    text = render_verdict_table(mixed_report(), include_pass=False)
    assert " pass" not in text.split("\n\n")[1]


def test_markdown_is_a_github_table_with_the_same_rows():
    report = mixed_report()
    text = render_verdict_markdown(report)
    lines = text.splitlines()
    assert lines[0].startswith("**compilegate: REGRESSION (exit 1)")
    assert "| " + " | ".join(HEADER) + " |" in lines
    table = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert len(table) == len(report.verdicts)
    assert table[0].endswith("| **regression** |")
    assert "new graph break at model.py:42" in text


def test_markdown_escapes_pipes_and_angle_brackets():
    baseline = result(step(variants=[variant()]))
    current = result(step(variants=[variant(status="error", error="a | b in <lambda>")]))
    text = render_verdict_markdown(compare_to_baseline(baseline, current))
    assert "a \\| b in &lt;lambda&gt;" in text


def test_markdown_keeps_links_images_and_mentions_from_user_code_inert():
    """`compare --format markdown` goes through the same escaping as the PR comment."""
    hostile = "see ![x](http://evil.example/p.png) [click](http://evil.example) @org/team"
    baseline = result(step(variants=[variant()]))
    current = result(step(variants=[variant(status="error", error=hostile)]))
    text = render_verdict_markdown(compare_to_baseline(baseline, current))
    assert "![x](" not in text and "[click](" not in text and "@org/team" not in text
