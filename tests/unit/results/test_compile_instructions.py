"""Issue 42, compile cost counted: torch's compile-time instruction count, judged where both
runs have it, said where one has not (gate/judges/compile_cost.judge_instructions), read at the
door (results/compile_cost.with_instructions) and probed in the child
(child/instruction_counter.py: on this project's virtual machines, no hardware counter)."""

from __future__ import annotations

import pytest
from gate_docs import judge_documents, result, step, variant
from test_compile_cost_judge import compile_cost

from compilegate.child import instruction_counter
from compilegate.errors import EXIT_OK, EXIT_REGRESSION
from compilegate.report.row_words import row_message
from compilegate.results.compile_cost import InstructionCount, with_instructions
from compilegate.results.model import Absence, CompileCost, CompileCounts

G = 10**9


def counted(instructions: int | None = None, absent: str | None = None) -> dict:
    cost = compile_cost()
    if instructions is not None:
        cost["instructions"] = instructions
    if absent is not None:
        cost["instructions_absent"] = absent
    return cost


def rows(base: dict, cur: dict):
    base_step = step(variants=[variant(compile_cost=base)])
    report = judge_documents(result(base_step), result(step(variants=[variant(compile_cost=cur)])))
    return report, {r.metric: r for r in report.verdicts if r.variant == "default"}


def test_growth_beyond_the_tolerance_is_a_regression_and_a_drop_an_improvement() -> None:
    report, found = rows(counted(40 * G), counted(46 * G))  # +15 %
    row = found["compile_instructions"]
    assert row.verdict == "regression" and report.exit_code == EXIT_REGRESSION
    assert row_message(row) == (
        "compile instructions 40.00 G → 46.00 G (+15.0 %): grew by more than the 5 % threshold"
    )
    _, found = rows(counted(40 * G), counted(41 * G))  # +2.5 %
    assert found["compile_instructions"].verdict == "pass"
    _, found = rows(counted(40 * G), counted(30 * G))
    assert found["compile_instructions"].verdict == "improvement"


def test_a_machine_without_a_counter_is_said_never_judged() -> None:
    report, found = rows(counted(40 * G), counted(absent=instruction_counter.NO_COUNTER))
    row = found["compile_instructions"]
    assert row.verdict == "pass" and not row.gated and report.exit_code == EXIT_OK
    assert "this run did not (not available on this machine: no hardware" in row_message(row)
    _, found = rows(counted(absent=instruction_counter.NO_COUNTER), counted(40 * G))
    assert found["compile_instructions"].verdict == "new"
    assert "the baseline has none (not available on this machine" in row_message(
        found["compile_instructions"]
    )
    _, found = rows(counted(), counted(absent=instruction_counter.NO_COUNTER))
    assert "compile_instructions" not in found  # neither counted: no row


def test_a_torch_without_the_counter_is_named_as_the_child_once_said_it() -> None:
    """The child records a code and the torch it names; an older document holds the
    child's sentence: both are said in the same words."""
    coded = {**counted(absent="no_instruction_counter"), "absent_torch": "2.4.1"}
    recorded = counted(absent="torch 2.4.1 has no compile-time instruction counter")
    for cur in (coded, recorded):
        _, found = rows(counted(40 * G), cur)
        assert row_message(found["compile_instructions"]) == (
            "compile instructions: the baseline counted 40.00 G; this run did not (torch 2.4.1 "
            "has no compile-time instruction counter): reported, not judged"
        )


@pytest.mark.parametrize(
    ("raw", "instructions", "absent"),
    [
        (None, None, None),
        ({"instructions": 123}, 123, None),
        ({"instructions": -5}, None, None),
        ({"instructions": "9" * 40}, None, None),
        ({"absent": "no_hardware_counter"}, None, Absence.NO_HARDWARE_COUNTER),
        ({"absent": "an older child's why " * 60}, None, ("an older child's why " * 60)[:500]),
        ({"absent": "y" * 900}, None, None),  # neither a code nor a sentence
    ],
)
def test_the_childs_count_is_read_at_the_door(raw, instructions, absent) -> None:
    counted = InstructionCount.of(raw)
    cost = with_instructions(CompileCost(counts=CompileCounts(), cold_samples=()), counted)
    assert (cost.instructions, cost.instructions_absent) == (instructions, absent)


def test_the_probe_on_this_machine_says_why_or_counts(capfd: pytest.CaptureFixture) -> None:
    started = instruction_counter.begin()
    if started is None:  # a machine with a hardware counter
        assert instruction_counter.end()["instructions"] >= 0
    else:
        assert started["absent"] == instruction_counter.NO_COUNTER
    assert "perf event" not in capfd.readouterr().err  # torch's own lines kept quiet
