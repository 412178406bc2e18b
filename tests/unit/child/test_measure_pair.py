"""Base and head in one process (child/measure_pair.py, issue 28): every round times each
copy of both sides next to each other, each side's timing comes back in a one-side child's
shape with the shared yardstick, and a drift that moves from round to round leaves the
head/base ratio of one process untouched where alternating processes carry it."""

from __future__ import annotations

import random

import pytest
from decision_docs import as_processes

pytest.importorskip("torch")

import torch

from compilegate.child import torch_state
from compilegate.child.measure_pair import Pinned, schedule_names, split_sides
from compilegate.child.timing import interleaved_rounds
from compilegate.results.process_report import ProcessReport
from compilegate.results.processes import (
    compiled_values,
    head_vs_base,
    process_record,
    round_ratio,
    within_process,
)
from compilegate.results.stats import compare_pairs

COPIES = ["eager", "eager_b", "compiled"]
COST_MS = {"eager": 2.0, "eager_b": 2.0, "compiled": 1.0, "yardstick": 0.5, "yardstick_launch": 0.2}


class Copy:
    def __init__(self, name: str, factor: float = 1.0) -> None:
        self.ms = COST_MS[name] * factor

    def __call__(self, index: int) -> None:
        pass


class DriftTimer:
    """Each block's iterations cost the copy's time times the machine's slowness of that
    round: a host whose speed changes from one second to the next."""

    def __init__(self, blocks_per_round: int, seed: int) -> None:
        self.blocks_per_round, self.blocks = blocks_per_round, 0
        self.rng = random.Random(seed)
        self.slowness = 1.0

    def time_block(self, step: Copy, indices: list[int]) -> list[float]:
        if self.blocks % self.blocks_per_round == 0:
            self.slowness = self.rng.uniform(1.0, 1.6)
        self.blocks += 1
        return [step.ms * self.slowness * (1 + 0.001 * (i % 3)) for i in indices]


def timed_part(timed: dict) -> ProcessReport:
    """One side's timing as a process's part of a child's report, typed as at the door."""
    return ProcessReport.from_json({"timed": timed}, "eager")


def pair_process(seed: int, head_factor: float) -> dict[str, dict]:
    """One paired child's timing, split per side, as process records."""
    names = schedule_names(["base", "head"], COPIES)
    steps = {
        name: Copy(name.split("/")[-1], head_factor if name.startswith("head/") else 1.0)
        for name in names
    }
    timed = interleaved_rounds(
        steps,
        first_index=0,
        iterations=40,
        rounds=8,
        timer=DriftTimer(len(names), seed),
    )
    return {role: split_sides(timed, role) for role in ("base", "head")}


def test_each_round_times_both_sides_next_to_each_other() -> None:
    names = schedule_names(["base", "head"], COPIES)
    assert names == [
        "base/eager",
        "head/eager",
        "base/eager_b",
        "head/eager_b",
        "base/compiled",
        "head/compiled",
        "yardstick",
        "yardstick_launch",
    ]
    sides = pair_process(seed=1, head_factor=1.0)
    assert set(sides["base"]) == {"eager", "eager_b", "compiled", "yardstick", "yardstick_launch"}
    assert sides["base"]["yardstick"] is sides["head"]["yardstick"]
    assert sides["base"]["yardstick_launch"] is sides["head"]["yardstick_launch"]
    for copy in COPIES:  # the same rounds, the same count, on both sides
        assert sides["base"][copy]["rounds"] == sides["head"][copy]["rounds"]
        assert sorted(set(sides["head"][copy]["rounds"])) == list(range(8))


def test_a_drift_between_rounds_cancels_in_one_process_not_across_processes() -> None:
    in_process_base, in_process_head = [], []
    for seed in range(4):  # four paired children, each its own drift
        sides = pair_process(seed, head_factor=1.10)
        in_process_base.append(process_record(timed_part(sides["base"])))
        in_process_head.append(process_record(timed_part(sides["head"])))
    together = compare_pairs(
        compiled_values(in_process_base, per_yardstick=False),
        compiled_values(in_process_head, per_yardstick=False),
    )
    assert together.change_pct == pytest.approx(10.0, abs=1e-6)
    assert together.noise_pct is not None and together.noise_pct < 1e-6
    # The same drift with each side in its own process (alternating): each process draws
    # its own rounds, and the ratio carries the difference.
    apart_base = [process_record(timed_part(pair_process(2 * s, 1.10)["base"])) for s in range(4)]
    apart_head = [
        process_record(timed_part(pair_process(2 * s + 1, 1.10)["head"])) for s in range(4)
    ]
    apart = compare_pairs(
        compiled_values(apart_base, per_yardstick=False),
        compiled_values(apart_head, per_yardstick=False),
    )
    assert apart.noise_pct is not None and apart.noise_pct > 1.0


def test_each_side_is_timed_under_its_own_torch_settings() -> None:
    before = torch.get_num_threads()
    head_state = {**torch_state.capture(), "num_threads": 1 if before != 1 else 2}
    seen: list[int] = []
    pinned = Pinned(lambda index: seen.append(torch.get_num_threads()), head_state)
    with pinned.block():
        pinned(0)
    assert seen == [head_state["num_threads"]]
    assert torch.get_num_threads() == before


def test_the_round_ratio_is_the_head_over_base_of_each_rounds_fastest() -> None:
    # Round 0: head/base 1.1 on a fast machine; round 1: 1.3 while it ran at half speed
    # (a slow outlier in the head's block changes nothing): the geometric mean of the rounds'
    # ratios, sqrt(1.1 * 1.3), never the ratio of the fastest over the whole process (1.1).
    base = [1.0, 1.0, 2.0, 2.0, 2.0]
    head = [1.1, 1.1, 2.6, 2.6, 9.0]
    rounds = [0, 0, 1, 1, 1]
    assert round_ratio(head, rounds, base, rounds) == pytest.approx((1.1 * 1.3) ** 0.5)


def test_pairs_timed_in_one_process_are_judged_on_their_round_ratio() -> None:
    sides = pair_process(seed=3, head_factor=1.10)
    ratios = head_vs_base(timed_part(sides["head"]), timed_part(sides["base"]))
    assert ratios["compiled"] == pytest.approx(1.10)
    assert ratios["eager"] == pytest.approx(1.10)
    in_one, apart = as_processes(
        [
            {"fastest_ms": {"eager": 1.0}, "head_vs_base": {"eager": 1.05, "compiled": 1.25}},
            {"fastest_ms": {"eager": 1.0}},
        ]
    )
    base_values, head_values = [2.0, 2.0], [9.0, 9.0]
    assert within_process(base_values, head_values, [in_one, apart], "compiled") == [2.5, 9.0]
    assert within_process(base_values, head_values, [in_one, apart], "speedup") == [
        pytest.approx(2.0 * 1.05 / 1.25),
        9.0,
    ]
