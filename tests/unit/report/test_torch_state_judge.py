"""What the step's factory changed in torch's global state, against the baseline's step
(gate/judges/torch_state.py): a row naming the setting, reported, never failing the job."""

from __future__ import annotations

from gate_docs import judge_documents, result, step, variant

from compilegate.errors import EXIT_OK
from compilegate.report.row_words import row_message

THREADS_1 = {"changed": {"num_threads": {"before": 2, "after": 1}}}
NOTHING = {"changed": {}}


def judge(base_state, cur_state):
    docs = []
    for state in (base_state, cur_state):
        doc = step(variants=[variant()])
        for entry in (doc["eager"], doc["variants"][0]):
            entry["torch_state"] = state
            if state is None:
                del entry["torch_state"]  # a result from before the record
        docs.append(doc)
    report = judge_documents(result(docs[0]), result(docs[1]))
    return report, {r.variant: r for r in report.rows(metric="torch_state")}


def test_a_factory_that_now_sets_the_thread_count_is_named():
    report, rows = judge(NOTHING, THREADS_1)
    for row in rows.values():
        assert (row.verdict, row.gated) == ("pass", False)
        assert "num_threads 2 → 1 (the baseline's step left it)" in row_message(row)
    assert set(rows) == {"eager", "default"} and report.exit_code == EXIT_OK


def test_the_same_change_as_the_baseline_is_said_once_more_quietly():
    _, rows = judge(THREADS_1, THREADS_1)
    assert "as in the baseline: num_threads 2 → 1" in row_message(rows["eager"])


def test_a_change_the_baseline_made_and_this_run_no_longer_makes():
    _, rows = judge(THREADS_1, NOTHING)
    assert "num_threads no longer changed" in row_message(rows["eager"])


def test_a_different_value_names_both():
    other = {"changed": {"num_threads": {"before": 2, "after": 8}}}
    _, rows = judge(THREADS_1, other)
    assert "num_threads → 8 (the baseline's step set 1)" in row_message(rows["default"])


def test_an_old_baseline_without_the_record():
    _, rows = judge(None, THREADS_1)
    assert "the baseline predates this record" in row_message(rows["eager"])
    _, rows = judge(None, NOTHING)
    assert rows == {}


def test_no_record_or_no_change_on_either_side_has_no_row():
    assert judge(None, NOTHING)[1] == {}  # a baseline from before the record
    assert judge(NOTHING, NOTHING)[1] == {}
