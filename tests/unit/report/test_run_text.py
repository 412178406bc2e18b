"""What `compilegate run` prints (report/run_text.py), from the stored H200 run of 2026-12-04
(one step, two variants, 4 processes each): alone, against a stored baseline (passing and
failing) and paired — the verdict first and last, each table once, within 60 terminal rows
at 80 and 100 columns, no number broken by wrapping, every figure with its statistic."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from gate_docs import result, step, variant
from h200_runs import load_as_recorded_today
from said_rows import said_row

from compilegate.gate.judges.speed_facts import SpeedFacts, Statistic
from compilegate.gate.verdict import MetricVerdict, Verdict
from compilegate.report.escape import shortened
from compilegate.report.judge_and_render import judge_result
from compilegate.report.row_cells import judged_change, reader_values
from compilegate.report.row_words import row_message, worded_row
from compilegate.report.row_words.worded import words_only
from compilegate.report.run_text import render_run_text, variant_ms
from compilegate.report.tables import display_width, fit_table, wrap_words
from compilegate.results.location import default_result_path
from compilegate.results.model import parse
from repo_helpers import REPO_ROOT

NANOGPT = Path(__file__).parents[1] / "data" / "nanogpt"
WIDTHS = (80, 100)
NUMBER = re.compile(r"[−+±(]?[0-9][0-9,.]*(?:[–-][0-9][0-9,.]*\)?)?(?: ?(?:%|ms|s|×|steps))?")


def paired(document: dict[str, Any], role: str) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document["pairing"] = {"id": "t", "role": role, "base_label": "base", "head_label": "head"}
    return document


def with_graph_break(document: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(document)
    site = {"file": "model.py", "line": 181, "reason": "Tensor.item()", "count": 1, "in_repo": True}
    document["steps"][0]["variants"][1]["graph_breaks"] = {"count": 1, "sites": [site]}
    return document


# As a run records them today (its numerics' facts as fields): what the page shows.
RUN1, RUN2 = (load_as_recorded_today(f"run{n}-result.json.gz") for n in (1, 2))
CASES = {
    "alone": (None, RUN1),
    "baseline passing": (RUN1, RUN2),
    "baseline failing": (RUN1, with_graph_break(RUN2)),
    "against": (paired(RUN1, "base"), paired(RUN2, "head")),
    # A real repository's failing pull request (karpathy/nanoGPT: a graph break in attention,
    # two variants failing alike), measured on this project's 2-core CPU.
    "nanoGPT failing": (
        json.loads((NANOGPT / "baseline.json").read_text()),
        json.loads((NANOGPT / "head.json").read_text()),
    ),
}


def run_text(case: str, width: int) -> str:
    baseline, document = CASES[case]
    where = ["result written to /tmp/r.json"]
    if baseline is None:
        return render_run_text(parse(document, "r.json"), width=width, where_lines=where)
    base = parse(baseline, "b.json", "baseline")
    result = parse(document, "r.json", "result")
    _, run_set = judge_result(base, result, result_path="r.json", baseline_path="b.json")
    return render_run_text(
        run_set.versions[0].document,
        width=width,
        run_set=run_set,
        where_lines=where,
        every_row_command="compilegate compare --baseline b.json --result r.json",
    )


def terminal_rows(text: str, columns: int) -> int:
    return sum(max(1, math.ceil(display_width(line) / columns)) for line in text.splitlines())


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", CASES)
def test_the_verdict_comes_first_and_last_within_sixty_rows(case: str, width: int) -> None:
    text = run_text(case, width)
    lines = text.splitlines()
    assert terminal_rows(text, width) <= 60, text
    assert max(display_width(line) for line in lines) <= width, text
    first = lines[0]
    if CASES[case][0] is None:
        assert first.startswith("→ seed-small: compile with reduce-overhead"), first
    else:
        assert first.startswith(("❌ compilegate", "⚠️ compilegate", "compilegate ")), first
    block = lines[: lines.index(next(x for x in lines if x.startswith("compilegate 0.")))]
    assert lines[-len(block) :] == block, "the verdict again, last"


@pytest.mark.parametrize("case", CASES)
def test_each_table_once(case: str) -> None:
    text = run_text(case, 80)
    # the variants table once (the attention table below may have a variant column too)
    assert len(re.findall(r"^\s+variant\s+speedup", text, re.M)) == 1, text
    assert len(re.findall(r"^\s+where\s", text, re.M)) <= 1, text
    assert text.count("⚠️ run health") <= 1  # the line itself once (a note may refer to it)


@pytest.mark.parametrize("case", CASES)
def test_no_number_is_broken_at_80_columns(case: str) -> None:
    """Every number laid out whole at 1000 columns is whole on some line at 80."""
    wide = run_text(case, 1000)
    narrow = [" ".join(line.split()) for line in run_text(case, 80).splitlines()]
    numbers = {m.group(0) for m in NUMBER.finditer(wide)}
    broken = [n for n in numbers if not any(n in line for line in narrow)]
    assert len(numbers) > 20 and not broken, broken


def test_a_table_too_wide_for_its_words_is_stacked_not_broken() -> None:
    rows = [
        ("variant", "break-even steps", "change"),
        ("reduce-overhead", "11,000 (9,000–98,000 steps)", "−10 %"),
    ]
    lines = fit_table(rows, 30)
    assert all(display_width(line) <= 30 for line in lines), lines
    for number in ("11,000", "(9,000–98,000 steps)", "−10 %"):
        assert any(number in line for line in lines), (number, lines)
    assert lines[0].startswith("reduce-overhead: "), lines


def test_wrapped_sentences_keep_a_number_with_its_unit() -> None:
    lines = wrap_words("x" * 70 + " moved −10 % in 1,500 steps", 76)
    assert lines[1].startswith("−10 %") or "−10 %" in lines[0], lines


def test_the_table_shows_the_statistic_its_speedup_is_made_of() -> None:
    """Issue 31: a 1.13× speedup beside eager 8.93 ms < compiled 10.09 ms. The ms are now the
    means the speedup divides, named in the legend: eager ÷ compiled gives the speedup back."""
    text = run_text("alone", 100)
    typed = parse(RUN1, "r.json").steps[0]
    for row in RUN1["steps"][0]["variants"]:
        eager, compiled = variant_ms(typed, typed.variant(row["id"]))
        shown = re.search(
            rf"^\s+{row['id']}\s+([0-9.]+)×\s+\S+\s+([0-9.]+)\s+([0-9.]+)", text, re.M
        )
        assert shown, text
        speedup, eager_shown, compiled_shown = (float(g) for g in shown.groups())
        assert eager_shown / compiled_shown == pytest.approx(speedup, rel=0.005)
        assert eager / compiled == pytest.approx(row["payoff"]["speedup"]["estimate"], rel=1e-3)
    words = " ".join(text.split())
    assert "mean step time" in words and "geometric mean over 4 processes" in words
    assert "median" not in words


def test_a_result_without_processes_says_median() -> None:
    document = result(step("gpt", variants=[variant()]))
    document["steps"][0]["variants"][0].pop("payoff", None)
    document["steps"][0]["variants"][0]["processes"] = []
    text = render_run_text(parse(document, "r.json"), width=80)
    assert "median step time in one process" in text, text
    assert " mean " not in text


def test_a_failed_step_without_a_device_never_shows_a_question_mark() -> None:
    document = result(step("gpt", variants=[variant()]))
    document["steps"][0].update(status="error", error="factory raised ValueError", device=None)
    text = render_run_text(parse(document, "r.json"), width=80)
    assert "(?)" not in text
    assert text.splitlines()[0] == "→ gpt: failed: factory raised ValueError"
    assert "step gpt: failed: factory raised ValueError" in text


def _row(**fields: Any) -> MetricVerdict:
    base = dict(step="gpt", variant="default", verdict="regression", direction="lower_is_better")
    return said_row(**{**base, **fields})


def test_values_get_the_digits_their_change_needs() -> None:
    row = _row(
        metric="compiled_step_ms", unit="ms", baseline=18.44, current=16.6,
        change=-10.0, change_unit="pct", threshold=5.0, noise_pct=30.0,
    )  # fmt: skip
    nothing_more = words_only("said")  # its family has nothing for the cells beyond the row
    assert reader_values(row, nothing_more) == "18.4 ms → 16.6 ms"
    speedup = _row(
        metric="speedup", unit="x", baseline=0.8501, current=0.7715, change=-9.25,
        change_unit="pct", threshold=5.0, noise_pct=12.7, direction="higher_is_better",
    )  # fmt: skip
    assert reader_values(speedup, nothing_more) == "0.85× → 0.77×"


def test_a_row_judged_per_yardstick_shows_the_milliseconds_and_their_own_change() -> None:
    row = _row(
        metric="eager_step_ms", unit="yardsticks", baseline=40.0, current=36.0, change=-10.0,
        change_unit="pct", threshold=5.0, noise_pct=3.0, normalisation="yardstick",
        facts=SpeedFacts(
            Statistic.FASTEST, Verdict.IMPROVEMENT, processes=(4, 4),
            raw_ms=(18.1234, 17.9301), raw_change_pct=-1.04,
        ),
    )  # fmt: skip
    # the milliseconds as the row's sentence says them
    assert "raw 18.12 ms → 17.93 ms, -1.0 %" in row_message(row)
    assert reader_values(row, worded_row(row)) == "18.1 ms → 17.9 ms (−1.0 %)"
    assert judged_change(row) == "−10 % per yardstick"


def test_a_shortened_reason_keeps_its_location() -> None:
    said = "RuntimeError: " + "x" * 300 + " (at compilegate_steps/word_language_model.py:57)"
    short = shortened(said, 160)
    assert len(short) == 160
    assert short.endswith("… (at compilegate_steps/word_language_model.py:57)")
    assert shortened("ValueError: short (at a.py:1)", 160) == "ValueError: short (at a.py:1)"


def test_the_result_goes_outside_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "my repo"
    home = default_result_path(repo, {"HOME": str(tmp_path / "home")})
    assert home.parent.parent == tmp_path / "home" / ".cache" / "compilegate" / "results"
    assert re.fullmatch(r"my_repo-[0-9a-f]{8}", home.parent.name) and home.name == "result.json"
    actions = {"GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(tmp_path / "t"), "HOME": "/h"}
    assert default_result_path(repo, actions).parent.parent == tmp_path / "t" / "compilegate"
    other = default_result_path(tmp_path / "elsewhere" / "my repo", {"HOME": "/h"})
    assert other.parent.name != home.parent.name, "two clones of one name kept apart"


def test_the_getting_started_page_shows_what_a_run_prints() -> None:
    page = (REPO_ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    shown = page.split("<!-- run-text: alone, 100 columns -->\n```\n", 1)[1].split("```", 1)[0]
    text = render_run_text(
        parse(RUN1, "r.json"), width=100, where_lines=["result written to r.json"]
    )
    assert shown == text


def test_rows_failing_alike_on_both_variants_are_said_once_with_their_reasons() -> None:
    text = run_text("nanoGPT failing", 80)
    assert "Fails (3), all in gpt · default; default, dynamic:" in text
    # each reason once, and the step's degraded notes not again above them
    assert text.count("Unsupported Tensor.item() call") == 1
    assert text.count("model.py:72") == 2  # the graph break's cause, the fallback's loop
    assert "degraded" not in text
    assert terminal_rows(text, 80) <= 60


def test_the_run_lays_out_for_columns_when_set_even_into_a_pipe(monkeypatch) -> None:
    from compilegate.cli import run_command

    monkeypatch.setenv("COLUMNS", "80")
    assert run_command._width() == 80
    monkeypatch.setenv("COLUMNS", "300")
    assert run_command._width() == 100
    monkeypatch.delenv("COLUMNS")
    assert run_command._width() == 100  # pytest's stdout is no terminal
