"""The garbage collector is held still inside every timed block (child/timing.py, issue 28:
pyperf's hygiene): a collection never lands on a timed iteration, and it runs again after."""

from __future__ import annotations

import gc

import pytest

pytest.importorskip("torch")

from compilegate.child.timing import CpuTimer, interleaved_rounds


def test_the_collector_is_off_inside_timed_blocks_and_on_again_after() -> None:
    seen: list[bool] = []

    def step(index: int) -> None:
        seen.append(gc.isenabled())

    assert gc.isenabled()
    timed = interleaved_rounds(
        {"eager": step, "compiled": step}, first_index=0, iterations=6, rounds=3, timer=CpuTimer()
    )
    assert len(seen) == 12 and not any(seen)
    assert gc.isenabled()
    assert timed["eager"]["rounds"] == [0, 0, 1, 1, 2, 2]


def test_a_collector_the_step_turned_off_stays_off() -> None:
    gc.disable()
    try:
        interleaved_rounds(
            {"a": lambda i: None}, first_index=0, iterations=2, rounds=1, timer=CpuTimer()
        )
        assert not gc.isenabled()
    finally:
        gc.enable()
