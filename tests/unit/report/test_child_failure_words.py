"""report/child_failure_words.py: every failure run/ records is facts (`failure`, with the
cause's figures and where in the step it happened), `error` only the text that is not
compilegate's; the words are composed here from the record, the very words run/ stored as
`error` before issue 53 (each EXPECTED text is what the old code wrote); a document from
before keeps its error sentence and is said as recorded."""

from __future__ import annotations

from typing import Any

import pytest
from gate_docs import result, step, variant

from compilegate.child.protocol import Phase
from compilegate.report.child_failure_words import error_words, said_error
from compilegate.report.run_text import render_run_text
from compilegate.results.model import ChildFailure as FailureRecord
from compilegate.results.model import FailureStage, parse, part_of
from compilegate.run.child_budget import BudgetPassed, ChildBudget
from compilegate.run.child_failure import (
    FAILED_EAGERLY,
    HEAD_LACKS_STEP,
    RUN_ENDED,
    RUN_INTERRUPTED,
    ArtifactsRefused,
    BadResult,
    ChildFailure,
    Crashed,
    DeadlineRanOut,
    Exited,
    Interrupted,
    LaunchFailed,
    NoFirstProcess,
    NoReport,
    NoResult,
    NotFinite,
    NotMeasured,
    NotRecorded,
    NotRun,
    NotStarted,
    OutOfMemory,
    PairIncomplete,
    PairUnreadable,
    PidsLimit,
    TimedOut,
    UserError,
    WallCapPassed,
)
from compilegate.run.descendant_cpu import COUNTED_WITH_SUBREAPER
from compilegate.schemas import validation_errors

CPU = BudgetPassed("cpu", ChildBudget(300.0, 1200.0), 301.4, 310.2)
WALL = BudgetPassed("wall", ChildBudget(300.0, 1200.0), 12.0, 1200.5)
EAGER = FailureStage.EAGER
LATER = FailureStage.TIMING_PROCESS
# (the failure, the words the old code stored as `error`, what `error` keeps now)
CASES: list[tuple[ChildFailure, str, str]] = [
    (
        ChildFailure(TimedOut(CPU, COUNTED_WITH_SUBREAPER), Phase.COMPILE, "compiling", "tick 3"),
        "timed out: used 301 CPU-s (timeout_s 300) in 310 s (every descendant counted, exited "
        "ones too: child subreaper) while compiling (last output: tick 3)",
        "tick 3",
    ),
    (
        ChildFailure(WallCapPassed(WALL), Phase.TIMED, "timing").at(LATER, 2, 3),
        "timing process 2/3: timed out: wall cap 1200 s passed (4 × timeout_s 300; 12 CPU-s "
        "used) while timing",
        "wall_cap",
    ),
    (
        ChildFailure(DeadlineRanOut(900.0, started=False)),
        "not started: --timeout-s 900 s ran out",
        "deadline",
    ),
    (
        ChildFailure(Crashed("SIGKILL", 9), Phase.COMPILE, "compiling").at(LATER, 3, 4),
        "timing process 3/4: child process crashed with signal SIGKILL (9) while compiling",
        "crashed",
    ),
    (
        ChildFailure(Exited(1, "Segfault-ish"), None, "", "Segfault-ish"),
        "child process exited with code 1: Segfault-ish (last output: Segfault-ish)",
        "Segfault-ish",
    ),
    (
        ChildFailure(Exited(3)),
        "child process exited with code 3",
        "exited",
    ),
    (
        ChildFailure(OutOfMemory(768), Phase.BUILD, "building"),
        "killed: out of memory (limit 768 MiB) while building",
        "out_of_memory",
    ),
    (ChildFailure(PidsLimit(64, 12)), "pids limit 64 reached (12 forks refused)", "pids_limit"),
    (
        ChildFailure(NotStarted("/venv/bin/python", "No such file or directory")),
        "cannot start /venv/bin/python: No such file or directory",
        "No such file or directory",
    ),
    (
        ChildFailure(NotStarted(None, "no such image")),
        "container did not start: no such image",
        "no such image",
    ),
    (ChildFailure(NoResult()), "child process exited without writing its result", "no_result"),
    (
        ChildFailure(BadResult("unparsable", "eager: unknown key forged")).at(EAGER),
        "eager: child process wrote a result the parent cannot read: eager: unknown key forged",
        "eager: unknown key forged",
    ),
    (
        ChildFailure(UserError("RuntimeError:  boom\n  at line 3"), Phase.TIMED, "timing"),
        "RuntimeError: boom at line 3",
        "RuntimeError:  boom\n  at line 3",
    ),
    (
        ChildFailure(LaunchFailed("OSError: [Errno 24] Too many open files")),
        "compilegate could not run this child: OSError: [Errno 24] Too many open files",
        "OSError: [Errno 24] Too many open files",
    ),
    (ChildFailure(NoReport()), "the child ended without a report", "no_report"),
    (
        ChildFailure(PairIncomplete()).at(EAGER),
        "eager: the paired child did not return both sides",
        "pair_incomplete",
    ),
    (
        ChildFailure(PairUnreadable("ReportError: status")),
        "the paired child's report: ReportError: status",
        "ReportError: status",
    ),
    (
        ChildFailure(NotRecorded("KeyError: 'speedup'")).at(FailureStage.SUMMARY),
        "summary: compilegate could not record this measurement: KeyError: 'speedup'",
        "KeyError: 'speedup'",
    ),
    (
        ChildFailure(NoFirstProcess()).at(LATER, 2, 2),
        "timing process 2/2: compilegate could not record this measurement: no first process",
        "no_first_process",
    ),
    (
        ChildFailure(NotFinite("NaN", "warmup_s[0]", 1)),
        "the measurement produced NaN at warmup_s[0] (and 1 more), not a finite number",
        "not_finite",
    ),
    (
        ChildFailure(NotFinite("Infinity", "eager.timed.eager.samples[0]", 9, True)).at(EAGER),
        "eager: the measurement produced Infinity at eager.timed.eager.samples[0] (and at "
        "least 9 more), not a finite number",
        "not_finite",
    ),
    (
        ChildFailure(ArtifactsRefused("artifacts.bin: larger than 1024 bytes")),
        "cache artifacts refused: artifacts.bin: larger than 1024 bytes",
        "artifacts.bin: larger than 1024 bytes",
    ),
    (ChildFailure(NotMeasured()), "not measured", "not_measured"),
    (ChildFailure(Interrupted("SIGINT")).at(EAGER), "eager: interrupted (SIGINT)", "interrupted"),
    (ChildFailure(NotRun(RUN_ENDED)), "not run: the run ended before this step", "not_run"),
    (
        ChildFailure(NotRun(RUN_INTERRUPTED, "SIGTERM")),
        "not run: the run was interrupted (SIGTERM)",
        "not_run",
    ),
    (ChildFailure(NotRun(FAILED_EAGERLY)), "not run: the step failed eagerly", "not_run"),
    (
        ChildFailure(NotRun(HEAD_LACKS_STEP)),
        "not measured: the head does not declare this step",
        "not_run",
    ),
]


def _failed_variant(
    error: str, failure: dict[str, Any] | None, vid: str = "default"
) -> dict[str, Any]:
    out = variant(vid, status="error", error=error)
    if failure is not None:
        out["failure"] = failure
    return out


@pytest.mark.parametrize(("failure", "said", "kept"), CASES, ids=[c[1][:40] for c in CASES])
def test_the_record_says_what_the_old_error_said(failure: ChildFailure, said: str, kept: str):
    error, record = failure.recorded()
    assert error == kept  # only text that is not compilegate's, else the cause's code
    raw = record.to_json()
    document = result(step("train", variants=[_failed_variant(error, raw)]))
    assert validation_errors(document, "result") == []
    read = part_of(FailureRecord, raw)  # through the door, as a report reads it
    assert error_words(error, read) == said
    assert said_error(document["steps"][0]["variants"][0]) == said


def test_no_record_holds_a_sentence_of_ours():
    """The words are the report's: no string the record keeps has a space, but the child's
    progress message and last line (theirs, not compilegate's words)."""
    for failure, _, _ in CASES:
        raw = failure.record().to_json()
        theirs = {"doing", "last_output"}
        strings = [v for k, v in raw.items() if isinstance(v, str) and k not in theirs]
        strings += [v for v in raw.get("figures", {}).values() if isinstance(v, str)]
        assert not [s for s in strings if " " in s], raw


def test_an_older_document_s_error_is_said_as_recorded():
    """Before issue 53: the error in words beside a record of cause and phase only (or none):
    every screen says the error as recorded."""
    said = "timed out: used 301 CPU-s (timeout_s 300) in 310 s while compiling"
    old_record = {"cause": "timed_out", "phase": "compile"}
    failed = [
        _failed_variant(said, old_record),
        _failed_variant("boom: the old words", None, "other"),
    ]
    ok = variant("fast")
    document = result(step("train", variants=[*failed, ok]))
    assert validation_errors(document, "result") == []
    text = render_run_text(parse(document, "result.json"))
    assert f"default: failed: {said}" in text
    assert "other: failed: boom: the old words" in text
    assert said_error(document["steps"][0]["variants"][0]) == said
    assert part_of(FailureRecord, old_record).figures is None


def test_a_record_lacking_a_figure_its_cause_needs_is_said_as_its_error():
    """A document written by hand (or by another tool): the record passes the schema but
    lacks a figure its words need; the error is said as recorded, never a traceback."""
    hand = {"cause": "timed_out", "phase": None, "figures": {"limit": "cpu"}}
    document = result(step("train", variants=[_failed_variant("took too long", hand)]))
    assert validation_errors(document, "result") == []
    assert said_error(document["steps"][0]["variants"][0]) == "took too long"
    text = render_run_text(parse(document, "result.json"))
    assert "default: failed: took too long" in text
    wrong = {**hand, "figures": {"cpu_s": "sixty"}}
    document["steps"][0]["variants"][0]["failure"] = wrong
    assert validation_errors(document, "result") != []  # each figure typed by the schema
