"""The decision as facts (issue 53, item 3): results/recommendation.py records the decision,
its figures and caveat codes, never a sentence; report/decision_words.py words them, in full
(the comment's and `report`'s line under the variant table) and in one line (`run`); an
older document's own sentence is said as recorded."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from decision_docs import typed, variant

from compilegate.report.run_text import step_decision
from compilegate.results.model import Decision, NumericsStatus, Status, Step, parse, step_of
from compilegate.results.recommendation import recommend, withheld

STEADY = [1.45, 1.55, 1.5, 1.6]
SLOW = [0.9, 0.92, 0.91, 0.9]
SCENARIOS = {
    "compile, degraded, numerics unchecked": [
        variant("default", [1.6] * 4, numerics=None, degraded=["2 graph breaks", "1 fallback"])
    ],
    "compile past a faster variant whose numerics fail": [
        variant("fast", [2.0] * 4, numerics="fail"),
        variant("safe", STEADY),
    ],
    "stay eager: no variant beats eager": [variant("slow", SLOW)],
    "stay eager: no numerics to trust": [variant("fast", [2.0] * 4, numerics="error")],
    "undecided": [variant("default", [1.10, 1.25, 1.23, 1.31])],
    "no variant ran": [{**variant("broken", STEADY), "status": "error", "error": "boom"}],
}


# The run length each scenario is decided for, where not the default (10,000 steps).
STEPS_PER_RUN = {"undecided": 50_000}


def scenario_step(scenario: str, unsteady: bool = False) -> Step:
    return step_with(SCENARIOS[scenario], unsteady, STEPS_PER_RUN.get(scenario, 10_000))


def step_with(
    variants: list[dict[str, Any]], unsteady: bool = False, steps_per_run: int = 10_000
) -> Step:
    measured = typed(variants)
    advice = recommend(measured, steps_per_run)
    if unsteady:
        advice = withheld(advice)
    return Step(name="train", status=Status.OK, variants=measured, recommendation=advice)


def words_in(value: Any, path: str = "") -> list[tuple[str, str]]:
    """(where, string) of every string in a JSON value but the speedup's estimator (how it
    was estimated: payoff.py's description, outside this issue's items)."""
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [
            found
            for key, item in value.items()
            if key != "estimator"
            for found in words_in(item, f"{path}.{key}")
        ]
    if isinstance(value, list):
        return [found for item in value for found in words_in(item, path)]
    return []


@pytest.mark.parametrize("unsteady", [False, True])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_recorded_recommendation_holds_codes_and_ids_never_a_sentence(scenario, unsteady):
    variants = SCENARIOS[scenario]
    step = scenario_step(scenario, unsteady)
    assert step.recommendation is not None
    recorded = step.recommendation.to_json(as_recorded=True)
    assert "text" not in recorded
    # Every word it may record: its codes, and the variant ids it names.
    from compilegate.report.decision_words import decision_sentence
    from compilegate.results.model import Caveat, Withheld

    codes = {*Decision, *Caveat, *Withheld, *NumericsStatus, *(v["id"] for v in variants)}
    assert [(where, s) for where, s in words_in(recorded) if s not in codes] == []
    # ... and the report says it in full from those facts alone, as the document reads back
    said = decision_sentence(
        step_of({"name": "train", "status": "ok", "variants": variants, "recommendation": recorded})
    )
    assert said is not None and said == decision_sentence(step)


def test_each_caveat_is_said():
    from compilegate.report.decision_words import decision_sentence

    degraded = decision_sentence(scenario_step("compile, degraded, numerics unchecked"))
    assert degraded is not None
    assert degraded.startswith("a 10,000-step run: compiling with default saves ~")
    assert degraded.endswith(
        "; but not wholly compiled: 2 graph breaks (and 1 more); numerics not checked"
    )
    passed_over = decision_sentence(
        scenario_step("compile past a faster variant whose numerics fail")
    )
    assert str(passed_over).endswith("; fast (2.00×) is not recommended: its numerics fail")
    untrusted = decision_sentence(scenario_step("stay eager: no numerics to trust"))
    assert untrusted == (
        "stay eager: no variant's numerics can be trusted; "
        "fast (2.00×) is not recommended: its numerics check errored"
    )
    none_ran = decision_sentence(scenario_step("no variant ran"))
    assert none_ran == "no compiled variant ran successfully"


def test_a_withheld_decision_quotes_what_was_measured_in_full_and_in_one_line():
    from compilegate.report.decision_words import decision_sentence, short_decision

    measured = scenario_step("undecided")
    unsteady = scenario_step("undecided", unsteady=True)
    assert unsteady.recommendation is not None
    assert unsteady.recommendation.decision is Decision.UNDECIDED
    assert unsteady.recommendation.processes_needed is None  # more processes: no cure
    assert decision_sentence(unsteady) == (
        "no recommendation: the machine was unsteady while this ran (run health); measured: "
        f"{decision_sentence(measured)}"
    )
    assert "would decide (variant_processes:" in str(decision_sentence(measured))
    line = short_decision(unsteady)
    assert line.startswith("no recommendation: the machine was unsteady (run health); measured ")


def test_the_run_line_names_the_step_once_before_its_failed_variants_and_decision():
    """No cutting of the composed words: the step's name leads once, failed variants next."""
    from compilegate.report.decision_words import short_decision

    variants = [variant("slow", SLOW), {**variant("other", SLOW), "status": "error"}]
    variants[1]["error"] = "crashed: SIGSEGV"
    step = step_with(variants)
    line = step_decision(step)
    # a document with no `failure` record: its error's first line, as recorded
    failed = "1 of 2 variants failed (other: crashed: SIGSEGV)"
    assert line == f"train: {failed}; {short_decision(step)}"
    assert line.count("train") == 1
    assert short_decision(step).startswith("stay eager: no variant beats eager (best: slow ")


def test_an_older_documents_sentence_is_said_as_recorded():
    """A document from before the decision was recorded as facts: its `text` and its
    `withheld` sentence read and are said as recorded."""
    from compilegate.report.decision_words import decision_sentence, short_decision

    variants = SCENARIOS["stay eager: no variant beats eager"]
    recorded = step_with(variants).recommendation
    assert recorded is not None
    old = copy.deepcopy(recorded.to_json(as_recorded=True))
    del old["caveats"]
    old["text"] = "keep torch.compile off (as an older compilegate put it)"
    old["withheld"] = "the machine was unsteady while this ran (run health)"
    raw = {"name": "train", "status": "ok", "variants": variants, "recommendation": old}
    step = step_of(raw)
    assert decision_sentence(step) == old["text"]
    assert step.recommendation is not None and step.recommendation.withheld == old["withheld"]
    assert short_decision(step).startswith("no recommendation: the machine was unsteady")
    assert step.recommendation.to_json()["withheld"] == old["withheld"]  # written back as read


def test_a_document_with_the_new_facts_is_valid_and_reads_them_typed():
    from gate_docs import result, step

    from compilegate.results.model import Withheld

    doc = result(step())
    advice = scenario_step("compile past a faster variant whose numerics fail")
    assert advice.recommendation is not None
    doc["steps"][0]["recommendation"] = withheld(advice.recommendation).to_json(as_recorded=True)
    read = parse(doc, "r.json").steps[0].recommendation
    assert read is not None
    assert read.withheld is Withheld.UNSTEADY_MACHINE
    assert read.ruled_out is not None and read.ruled_out.numerics is NumericsStatus.FAIL
    assert read.withheld_decision is not None
    assert read.withheld_decision.decision is Decision.COMPILE
    assert read.cold_compiles == 1
