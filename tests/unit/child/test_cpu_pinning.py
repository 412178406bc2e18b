"""The child is pinned to as many CPUs as it runs threads during its timed blocks
(child/cpu_pinning.py): which CPUs, and that every thread of the process moves and comes back."""

from __future__ import annotations

import os
import threading

import pytest

from compilegate.child.cpu_pinning import pinned, pinned_cpus


def test_as_many_cpus_as_threads_the_last_ones():
    assert pinned_cpus(1, {0, 1}) == [1]
    assert pinned_cpus(2, range(8)) == [6, 7]
    assert pinned_cpus(3, [5, 1, 9, 3]) == [3, 5, 9]


def test_no_pinning_that_would_take_nothing_away():
    assert pinned_cpus(2, {0, 1}) is None
    assert pinned_cpus(4, {0, 1}) is None
    assert pinned_cpus(0, {0, 1, 2}) is None


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs sched_setaffinity and two CPUs",
)
def test_every_thread_is_pinned_for_the_block_and_restored_after():
    before = os.sched_getaffinity(0)
    started, release = threading.Event(), threading.Event()
    worker = threading.Thread(target=lambda: (started.set(), release.wait(10)))
    worker.start()
    started.wait(10)
    try:
        with pinned(1) as cpus:
            assert cpus == [max(before)]
            assert os.sched_getaffinity(0) == {max(before)}
            assert os.sched_getaffinity(worker.native_id) == {max(before)}
        assert os.sched_getaffinity(0) == before
        assert os.sched_getaffinity(worker.native_id) == before
    finally:
        release.set()
        worker.join()


def test_the_document_records_the_cpus_and_phases_and_reads_a_child_that_sent_none():
    from compilegate.results.document import eager_entry
    from compilegate.results.process_report import ProcessReport

    samples = {"samples": [1.0, 1.1, 1.2, 1.0], "rounds": [0, 0, 1, 1]}
    measured = {
        "warmup_s": [0.1],
        "peak_bytes": None,
        "timed": {"eager": samples, "eager_b": samples, "yardstick": samples},
    }
    pinned = ProcessReport.from_json({**measured, "cpus": [1], "phases_s": {"timed": 2.5}}, "eager")
    entry = eager_entry(pinned).to_json(as_recorded=True)
    record = entry["processes"][0]
    assert record["cpus"] == [1] and record["phases_s"] == {"timed": 2.5}
    older = eager_entry(ProcessReport.from_json(measured, "eager")).to_json(as_recorded=True)[
        "processes"
    ][0]  # an older release's child
    assert older["cpus"] is None and older["phases_s"] is None
