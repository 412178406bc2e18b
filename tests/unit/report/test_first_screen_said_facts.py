"""The first screen says rows together where the facts their reasons say are the same, not
where their sentences happen to read alike (issue 53, item 5: `_Said` was keyed on the
message text). Two variants that failed to run with different errors, whose messages read
the same once shortened to two lines, were one reason for both variants: the second
variant's error was said to be the first's."""

from __future__ import annotations

from pathlib import Path

from gate_docs import result, step, variant
from report_runs import judge

from compilegate.gate.verdict import MetricVerdict
from compilegate.report.comment import render_comment
from compilegate.report.first_screen import FirstScreen
from compilegate.report.run_set_text import render_run_set_text

# Two errors that differ only past the first RUN_REASON_CHARS characters, before where.
SHARED = "RuntimeError: mat1 and mat2 shapes cannot be multiplied " + "(batch) " * 30
AT = " (at model.py:57)"
ERRORS = {"a": f"{SHARED}: 4x8 and 16x4{AT}", "b": f"{SHARED}: 4x8 and 32x4{AT}"}


def two_variants_failing(tmp_path: Path):
    baseline = result(step("gpt", variants=[variant("a"), variant("b")]))
    head = result(
        step(
            "gpt",
            variants=[variant(v, status="error", error=error) for v, error in ERRORS.items()],
        )
    )
    return judge(tmp_path, baseline, **{"torch-2.13.0": head})


def test_variants_that_failed_differently_are_two_reasons_though_they_read_alike(
    tmp_path: Path,
):
    run_set = two_variants_failing(tmp_path)
    screen = FirstScreen.of(run_set)
    assert len(ERRORS["a"]) > 200  # shortened to two lines, each to the same words
    assert screen.reasons[0].message == screen.reasons[-1].message
    assert [(reason.what, reason.subject) for reason in screen.reasons] == [
        ("failed to run", "gpt · a"),
        ("failed to run", "gpt · b"),
    ]
    # the comment and the terminal say each variant's reason apart
    comment = render_comment(run_set).split("<details>", 1)[0]
    assert "- **failed to run** in gpt · a:" in comment
    assert "- **failed to run** in gpt · b:" in comment
    assert "- failed to run in gpt · b:" in render_run_set_text(run_set)


def _said_facts(row: MetricVerdict) -> object:
    """The facts a row's reason is composed from (first_screen/said.py), given what its
    family said of it."""
    from compilegate.report.first_screen.said import said_facts
    from compilegate.report.row_words import worded_row

    return said_facts(row, worded_row(row))


def test_rows_whose_reasons_say_the_same_facts_are_keyed_alike(tmp_path: Path):
    """The key is the facts the words are composed from: equal for equal errors, apart for
    the two errors above."""
    run_set = two_variants_failing(tmp_path)
    (version,) = run_set.versions
    assert version.verdict is not None
    rows = [row for row in version.verdict.verdicts if row.metric == "variant"]
    assert len(rows) == 2
    first, second = (_said_facts(row) for row in rows)
    assert first != second
    assert _said_facts(rows[0]) == first and hash(_said_facts(rows[0])) == hash(first)


def test_a_changed_setting_whose_values_are_mappings_is_said_once_per_change() -> None:
    """A step whose numerics settings changed (mappings: {'tol': 1.0}) is incomparable; the
    screen keyed its reason on those facts and stopped on "unhashable type: 'dict'" (the
    adversarial gate's hostile numerics tolerance, exit 3 instead of 4). Equal changes are
    one reason, different ones two."""
    from compilegate.gate.comparability import (
        ConfigChangedFacts,
        ConfigMismatch,
        SettingChange,
        StepConfigChange,
    )
    from compilegate.gate.rules import Subject
    from compilegate.gate.verdict import Verdict

    def row(after: dict):
        change = SettingChange("numerics", {"tol": 1.0}, after)
        facts = ConfigChangedFacts(StepConfigChange(ConfigMismatch.SETTINGS, (change,)))
        return Subject("gpt").row("step", Verdict.INCOMPARABLE, facts=facts)

    said = {_said_facts(row({"tol": 9.0})), _said_facts(row({"tol": 9.0})), _said_facts(row({}))}
    assert len(said) == 2
