"""Every stored document parses and judges exactly as the gate did when the verdicts were
recorded (golden_verdicts.py, which says how to regenerate them on a deliberate change)."""

from __future__ import annotations

import json

import pytest
from golden_verdicts import VERDICTS, judge, read_document, stored_documents

GOLDEN = json.loads(VERDICTS.read_text(encoding="utf-8"))
PATHS = stored_documents()


def test_the_golden_set_is_varied():
    codes = {entry["exit_code"] for entry in GOLDEN.values()}
    verdicts = {row["verdict"] for entry in GOLDEN.values() for row in entry["rows"]}
    assert codes == {0, 1, 3, 4}
    assert {"pass", "regression", "improvement", "inconclusive", "new", "error"} <= verdicts
    assert {"missing", "removed", "incomparable", "skipped"} <= verdicts
    assert len(GOLDEN) >= 200


@pytest.mark.parametrize("pair", sorted(GOLDEN))
def test_same_rows_and_exit_code(pair):
    base_name, _, result_name = pair.partition(" | ")
    baseline = read_document(PATHS[base_name], "baseline")
    result = read_document(PATHS[result_name], "result")
    expected = GOLDEN[pair]
    judged = judge(baseline, result)
    assert judged["exit_code"] == expected["exit_code"]
    assert len(judged["rows"]) == len(expected["rows"])
    for got, want in zip(judged["rows"], expected["rows"]):
        # A field added to the rows later is not in the stored ones: compared on theirs.
        assert {key: got.get(key, "absent") for key in want} == want


def test_a_row_too_noisy_for_its_threshold_says_it_cannot_decide_it():
    """The report reads `decidable`; the gate sets it by its own rule (rules.decides_threshold)."""
    from compilegate.gate.rules import decides_threshold

    rows = [row for entry in GOLDEN.values() for row in entry["rows"]]
    judged = [r for r in rows if r["change_unit"] == "pct" and r["threshold"] is not None]
    undecidable = [
        r for r in judged if not decides_threshold(r["noise_pct"], r["threshold"], r["change"])
    ]
    assert undecidable  # the golden set has such rows
    pairs = {k for k, e in GOLDEN.items() if any(r in undecidable for r in e["rows"])}
    for pair in sorted(pairs)[:5]:
        base_name, _, result_name = pair.partition(" | ")
        judged_now = judge(
            read_document(PATHS[base_name], "baseline"), read_document(PATHS[result_name], "result")
        )
        for got in judged_now["rows"]:
            if got["change_unit"] == "pct" and got["threshold"] is not None:
                expected = decides_threshold(got["noise_pct"], got["threshold"], got["change"])
                assert got["decidable"] is expected
            else:
                assert got["decidable"] is True
