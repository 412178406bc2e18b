"""Issue 53 (items 3, 4): how many sentences does a result document hold that run/ or
results/ wrote into it about the decision and the run's health? Counts, for whichever
compilegate is on sys.path:

    recommendation   every string of each step's `recommendation` (its `text`, `withheld`,
                     …) but the speedup's `estimator` (payoff.py's description of how the
                     speedup was estimated: counted apart, outside items 3 and 4)
    run_health       every item of `run_health.unsteady`
    unsteady_times   every item of a step's mark when `baseline update` records the result
                     (gate/baseline.py writes it, from the result's run health)

in documents recorded the way a run of the checkout records them: each real document's
(bench/facts_render_diff.py's list) recommendations and run health recorded again from its
own measurements, on the machine as it was and on a busy one (every decision withheld), and
the decisions of tests/unit/report/test_decision_words.py's scenarios (every caveat, a variant
ruled out by its numerics, no variant to quote), idle and withheld. A sentence: a string
with a space in it (codes and variant ids have none).

    PYTHONPATH=<checkout>/runner python bench/stored_sentences.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "unit"))

from facts_render_diff import re_recorded, real_documents  # noqa: E402


def strings(value: Any, skip: str = "estimator") -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != skip for s in strings(v, skip)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v, skip)]
    return []


def estimators(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k == "estimator" and isinstance(v, str)]
        return found + [s for v in value.values() for s in estimators(v)]
    if isinstance(value, list):
        return [s for v in value for s in estimators(v)]
    return []


def sentences(items: list[str]) -> int:
    return sum(1 for s in items if " " in s)


def scenario_documents() -> dict[str, dict[str, Any]]:
    """A document per decision scenario (test_decision_words.py's), idle and withheld."""
    from decision_docs import typed, variant
    from gate_docs import result, step

    from compilegate.results.recommendation import recommend, withheld

    steady = [1.45, 1.55, 1.5, 1.6]
    scenarios = {
        "degraded, unchecked": [
            variant("default", [1.6] * 4, numerics=None, degraded=["2 graph breaks", "1 more"])
        ],
        "ruled out": [variant("fast", [2.0] * 4, numerics="fail"), variant("safe", steady)],
        "beats none": [variant("slow", [0.9, 0.92, 0.91, 0.9])],
        "untrusted": [variant("fast", [2.0] * 4, numerics="error")],
        "undecided": [variant("default", [1.10, 1.25, 1.23, 1.31])],
    }
    out = {}
    for name, variants in scenarios.items():
        advice = recommend(typed(variants), 50_000 if name == "undecided" else 10_000)
        for unsteady in (False, True):
            doc = result(step())
            chosen = withheld(advice) if unsteady else advice
            doc["steps"][0]["recommendation"] = chosen.to_json(as_recorded=True)
            out[f"scenario {name}{' withheld' if unsteady else ''}"] = doc
    return out


def marks(document: dict[str, Any]) -> list[str]:
    """The `unsteady_times` items `baseline update` writes of this result."""
    from compilegate.gate.baseline import with_times_vouched
    from compilegate.results.model import parse

    vouched = with_times_vouched(parse(document, "result.json"), force=False).to_json()
    return [s for step in vouched["steps"] for s in step.get("unsteady_times") or ()]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    documents: dict[str, dict[str, Any]] = {}
    for name, (doc, _) in real_documents().items():
        for busy in (False, True):
            documents[f"{name}{' busy' if busy else ''}"] = re_recorded(doc, busy)
    documents.update(scenario_documents())
    totals = {"recommendation": 0, "run_health": 0, "unsteady_times": 0, "estimator": 0}
    strings_seen = {"recommendation": 0, "run_health": 0, "unsteady_times": 0}
    for doc in documents.values():
        recs = [s.get("recommendation") or {} for s in doc["steps"]]
        rec_strings = strings(recs)
        unsteady = strings((doc.get("run_health") or {}).get("unsteady") or [])
        times = marks(doc)
        strings_seen["recommendation"] += len(rec_strings)
        strings_seen["run_health"] += len(unsteady)
        strings_seen["unsteady_times"] += len(times)
        totals["recommendation"] += sentences(rec_strings)
        totals["run_health"] += sentences(unsteady)
        totals["unsteady_times"] += sentences(times)
        totals["estimator"] += sentences(estimators(recs))
    print(f"{len(documents)} documents recorded by {sys.modules['compilegate'].__file__}")
    for field, count in totals.items():
        seen = f" of {strings_seen[field]} strings" if field in strings_seen else ""
        print(f"  {field:15} {count} sentences{seen}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
