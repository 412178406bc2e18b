"""Which blocks regional compilation compiles (child/training.repeated_blocks), and the one
line when nothing repeats; the lever read at the parent's door (results/document.py)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from torch import nn

from compilegate.child.protocol import Phase
from compilegate.child.training import NO_REPEATED_BLOCK, NoRepeatedBlock, repeated_blocks
from compilegate.report.child_failure_words import failure_words
from compilegate.report.lever_words import lever_sentence
from compilegate.results.document import with_regional
from compilegate.results.model import (
    Absence,
    CompileCost,
    CompileCounts,
    RegionalBlocks,
    RegionalLever,
    Status,
    Variant,
)
from compilegate.results.process_report import ProcessReport
from compilegate.run.child_failure import ChildFailure, Crashed


def block(width: int) -> nn.Module:
    return nn.Sequential(nn.Linear(width, width), nn.ReLU())


def test_the_largest_list_of_one_class_is_chosen() -> None:
    model = nn.Module()
    model.small = nn.ModuleList(block(2) for _ in range(3))
    model.layers = nn.ModuleList(block(8) for _ in range(2))
    model.mixed = nn.ModuleList([block(64), nn.ReLU()])  # not one class
    model.lone = nn.ModuleList(nn.Linear(64, 64) for _ in range(4))  # no blocks: Linears
    name, blocks = repeated_blocks(model)
    assert name == "layers" and blocks is model.layers
    deep = nn.Sequential(nn.Linear(4, 8), nn.Sequential(*(block(8) for _ in range(3))))
    assert repeated_blocks(deep)[0] == "1"  # a Sequential of blocks counts too


def test_nothing_repeated_says_so() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))  # layers, not blocks
    with pytest.raises(NoRepeatedBlock, match=r"no nn\.ModuleList or nn\.Sequential of two"):
        repeated_blocks(model)
    with pytest.raises(NoRepeatedBlock):
        repeated_blocks(nn.Module())


def entry() -> Variant:
    cost = CompileCost(counts=CompileCounts(), cold_samples=())
    return Variant(
        id="default", mode="default", compile_target="model", status=Status.OK, compile_cost=cost
    )


def measured_json(compile_s: float = 3.0) -> dict:
    timed = {side: {"samples": [10.0, 12.0], "rounds": [1, 2]} for side in ("eager", "eager_b")}
    timed["compiled"] = {"samples": [8.0, 8.0], "rounds": [1, 2]}
    return {
        "timed": timed,
        "compile": {
            "window": {"wall_s": compile_s + 1.0, "cpu_s": 5.0},
            "eager_window": {"wall_s": 1.0, "cpu_s": 1.0},
            "blocks": {"name": "layers", "count": 2, "class_name": "Block"},
        },
    }


def measured(compile_s: float = 3.0) -> ProcessReport:
    return ProcessReport.from_json(measured_json(compile_s), "variant")


def test_the_lever_from_its_process() -> None:
    lever = with_regional(entry(), measured(), None).regional
    assert lever is not None and lever.absent is None
    assert (lever.blocks, lever.compile_wall_s) == (RegionalBlocks("layers", 2, "Block"), 3.0)
    assert (lever.eager_ms, lever.compiled_ms) == (11.0, 8.0)
    found = lever.break_even_steps
    assert found is not None and found.estimate == pytest.approx(1000.0)  # 3 s over 3 ms a step
    assert found.low <= found.estimate and (found.high is None or found.high >= found.estimate)
    slower = measured_json()
    slower["timed"]["compiled"]["samples"] = [12.0, 12.0]
    typed = ProcessReport.from_json(slower, "variant")
    unsure = with_regional(entry(), typed, None).regional.break_even_steps
    assert unsure is not None and unsure.estimate is None and unsure.high is None
    slower["timed"]["compiled"]["samples"] = [30.0, 31.0]  # slower in every round
    typed = ProcessReport.from_json(slower, "variant")
    assert with_regional(entry(), typed, None).regional.break_even_steps is None
    words = lever_sentence(SimpleNamespace(variants=[with_regional(entry(), measured(), None)]))
    assert words is not None and words.startswith(
        "default: cold n/a; regional (layers: 2 × Block) 3.0 s, step 8.0 ms against eager 11.0 "
        "ms in its process: break-even after 1,000 steps (95 % interval "
    )


def test_absent_failed_and_forged_are_read_as_such() -> None:
    why = "the model has no nn.ModuleList"
    absent = ProcessReport.from_json({"regional_absent": why}, "variant")
    assert with_regional(entry(), absent, None).regional == RegionalLever(absent=why)
    crash = ChildFailure(Crashed("SIGKILL", 9), Phase.COMPILE, "compiling")
    failed = with_regional(entry(), None, crash.recorded()).regional
    assert failed is not None and failed.absent is Absence.PROCESS_FAILED
    assert (failed.error, failed.failure) == crash.recorded()  # facts, as a variant keeps them
    said = lever_sentence(SimpleNamespace(variants=[replace(entry(), regional=failed)]))
    # the words results/ stored before (f"its process failed: {the failure's words}"):
    assert said == f"default: cold n/a; regional absent: its process failed: {failure_words(crash)}"
    missing = with_regional(entry(), None, None).regional
    assert missing == RegionalLever(absent=Absence.NOT_MEASURED)
    said = lever_sentence(SimpleNamespace(variants=[replace(entry(), regional=missing)]))
    assert said == "default: cold n/a; regional absent: not measured"
    forged = measured_json()
    for blocks in (
        {"<img src=x>": 1},
        {"name": "layers", "count": 1, "class_name": "Block"},  # one block is no repetition
        {"name": "layers", "count": True, "class_name": "Block"},
        "layers: 2 × Block",  # the words a child of before wrote: no child writes them now
    ):
        forged["compile"]["blocks"] = blocks
        typed = ProcessReport.from_json(forged, "variant")
        assert with_regional(entry(), typed, None).regional.blocks is None


def test_the_blocks_are_facts_said_as_the_childs_words_were() -> None:
    """The child records the blocks' name, count and class; report/ says them as the child's
    words said them (before, `layers: 2 × Block`), and an older document's words as recorded."""
    lever = with_regional(entry(), measured(), None).regional
    old = replace(lever, blocks="layers: 2 × Block")
    said, said_old = (
        lever_sentence(SimpleNamespace(variants=[replace(entry(), regional=r)]))
        for r in (lever, old)
    )
    assert said == said_old and "regional (layers: 2 × Block) 3.0 s" in said


# What the child wrote when nothing repeats, before issue 53's last items (5a5d0e2).
OLD_NOTHING_REPEATS = (
    "the model has no nn.ModuleList or nn.Sequential of two or more blocks of one class: "
    "regional compilation has no repeated block to compile once and reuse"
)


def test_nothing_repeated_is_a_code_said_as_the_childs_sentence_was() -> None:
    """The child records the code; the lever read at the parent's door says what the
    child's sentence said, and an older document's sentence is said as recorded."""
    absent = ProcessReport.from_json({"regional_absent": NO_REPEATED_BLOCK}, "variant")
    lever = with_regional(entry(), absent, None).regional
    assert lever == RegionalLever(absent=Absence.NO_REPEATED_BLOCK)
    old = RegionalLever(absent=OLD_NOTHING_REPEATS)

    def said(regional: RegionalLever) -> str | None:
        variant = replace(entry(), regional=regional)
        return lever_sentence(SimpleNamespace(variants=[variant]))

    assert said(lever) == said(old) == f"default: cold n/a; regional absent: {OLD_NOTHING_REPEATS}"
