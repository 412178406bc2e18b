"""A paired run on a busy CI runner (7545c77, tests/integration/test_versions_paired.py):
two of the three pairs had a disturbed process (eager twins apart), leaving them out left
one pair, and the compiled-step row fell to the medians of a single process: "compiled step
time 71.90 ms → 0.4 ms, inside the ±6774107225783012.0 % noise". A disturbed process is left
out only while what stays is still judged on its processes; else all stay."""

from __future__ import annotations

from gate_docs import environment, judge_documents, process, result, step, variant, with_processes

from compilegate.gate.verdict import NOISE_FROM_RUNS
from compilegate.report.row_words import row_message


def samples(ms: float, spike: float, i: int) -> list[float]:
    return [ms * (1 + 0.01 * ((i + k) % 3)) * (spike if k < 10 else 1.0) for k in range(20)]


def side(role: str, disturbed: set[int], pairs: int = 3) -> dict:
    """`pairs` processes; those in `disturbed` ran eager under a load spike beside a quiet
    twin (their eager ×3, the twin not), and their compiled step ×40 for half the samples."""
    records = []
    for i in range(pairs):
        spike = 3.0 if i in disturbed else 1.0
        record = process(samples(10.0, 1.0, i), samples(5.0, 40.0 if i in disturbed else 1.0, i))
        record["samples_ms"]["eager"] = [v * spike for v in record["samples_ms"]["eager"]]
        record["fastest_ms"]["eager"] = min(record["samples_ms"]["eager"])
        records.append(record)
    settings = {"variant_processes": pairs, "eager_processes": 1}
    doc = with_processes(step(variants=[variant()], settings=settings), [], [records])
    document = result(doc, env=environment(commit=("b" if role == "base" else "h") * 40))
    document["pairing"] = {"id": "p", "role": role, "base_label": "base", "head_label": "head"}
    return document


def compiled_row(base_disturbed: set[int], head_disturbed: set[int], pairs: int = 3):
    report = judge_documents(
        side("base", base_disturbed, pairs), side("head", head_disturbed, pairs)
    )
    assert report.paired is not None
    return report.rows(metric="compiled_step_ms")[0]


def test_two_disturbed_pairs_of_three_stay_and_the_row_is_judged_on_its_pairs() -> None:
    row = compiled_row(set(), {0, 1})
    assert row.noise_source == NOISE_FROM_RUNS, row
    assert row.facts.processes == (3, 3) and row.facts.disturbed == ()
    assert "3 pairs of processes" in row_message(row), row_message(row)


def test_one_disturbed_pair_of_four_is_left_out_and_said() -> None:
    row = compiled_row(set(), {2}, pairs=4)
    assert row.noise_source == NOISE_FROM_RUNS, row
    assert row.facts.processes == (3, 3) and len(row.facts.disturbed) == 1
    assert "1 disturbed process left out" in row_message(row), row_message(row)
