"""Issue 42's portable-cache lever without torch: the child's record read at the door, the
artifacts process pooled apart from the cold and warm ones, the blob handed over without
following a link, and the words (the real compile: tests/integration/test_cache_artifacts.py)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from compilegate.child.protocol import CACHE_ARTIFACTS_FILE, ChildSpec, SpecError
from compilegate.report.lever_words import lever_sentence
from compilegate.results.compile_cost import CacheArtifacts, compile_cost
from compilegate.results.model import (
    Absence,
    BreakEvenInterval,
    CompileCounts,
    Decision,
    FastestMs,
    Payoff,
    Process,
    Recommendation,
    Status,
    Variant,
)
from compilegate.run.artifacts_handover import hand_over


def process(cache: str, wall_s: float) -> Process:
    return Process(
        fastest_ms=FastestMs(eager=1.0, compiled=1.0), compile_wall_s=wall_s, cache=cache
    )


def test_the_artifacts_process_is_neither_a_cold_nor_a_warm_sample() -> None:
    records = [process("cold", 17.4), process("artifacts", 15.6), process("warm", 3.2)]
    saved = CacheArtifacts(saved_bytes=331_973, absent=None)
    cost = compile_cost(records, CompileCounts(), artifacts=saved)
    assert [s.wall_s for s in cost.cold_samples] == []  # no CPU seconds: no cold sample
    assert cost.warm_wall_s == 3.2 and cost.artifacts_wall_s == 15.6
    assert cost.artifacts_bytes == 331_973 and cost.artifacts_absent is None
    assert CacheArtifacts.kept(cost) == saved
    assert compile_cost(records, CompileCounts()).artifacts_wall_s == 15.6
    assert CacheArtifacts.kept(compile_cost(records[:1], CompileCounts())) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ("saved", None),
        ({"saved_bytes": 12, "save_s": 0.1}, CacheArtifacts(12, None)),
        ({"saved_bytes": "12"}, CacheArtifacts(None, None)),
        ({"saved_bytes": -1, "absent": 5}, CacheArtifacts(None, None)),
        ({"absent": "x" * 10_000}, CacheArtifacts(None, None)),  # not a code nor a sentence
        ({"absent": "x y" * 5_000}, CacheArtifacts(None, ("x y" * 5_000)[:500])),  # as recorded
        (
            {"absent": "no_save_cache_artifacts", "torch": "2.4.1"},
            CacheArtifacts(None, Absence.NO_SAVE_CACHE_ARTIFACTS, "2.4.1"),
        ),
    ],
)
def test_the_childs_record_is_read_at_the_door(raw: object, expected: object) -> None:
    assert CacheArtifacts.of(raw) == expected


def test_a_spec_names_only_save_load_or_nothing() -> None:
    with pytest.raises(SpecError, match="cache_artifacts"):
        ChildSpec.from_json({"kind": "probe", "cache_artifacts": "rm -rf"})
    assert ChildSpec.from_json({"kind": "probe", "cache_artifacts": "save"}).cache_artifacts


def test_the_blob_is_copied_and_a_link_fifo_or_nothing_is_not(tmp_path: Path) -> None:
    source, target = tmp_path / "first", tmp_path / "next"
    source.mkdir()
    target.mkdir()
    assert hand_over(source, target).missing
    secret = tmp_path / "secret"
    secret.write_bytes(b"token")
    (source / CACHE_ARTIFACTS_FILE).symlink_to(secret)
    refused = hand_over(source, target)
    assert refused.refused and "not a regular file" in refused.refused
    assert not (target / CACHE_ARTIFACTS_FILE).exists()
    (source / CACHE_ARTIFACTS_FILE).unlink()
    os.mkfifo(source / CACHE_ARTIFACTS_FILE)
    assert hand_over(source, target).refused == f"{CACHE_ARTIFACTS_FILE}: not a regular file"
    (source / CACHE_ARTIFACTS_FILE).unlink()
    (source / CACHE_ARTIFACTS_FILE).write_bytes(b"\x00blob" * 1000)
    assert hand_over(source, target).copied == 5000
    assert (target / CACHE_ARTIFACTS_FILE).read_bytes() == b"\x00blob" * 1000
    linked = tmp_path / "linked"
    linked.symlink_to(source, target_is_directory=True)
    assert hand_over(linked, tmp_path / "next").refused  # the folder itself is not followed


def test_the_blob_is_copied_byte_for_byte_its_holes_left_holes(tmp_path: Path) -> None:
    """Issue 51: data between holes, a hole at the start and at the end; the copy reads the
    same and takes the blocks of its data only."""
    source, target = tmp_path / "first", tmp_path / "next"
    source.mkdir()
    target.mkdir()
    mib = 1 << 20
    blob = source / CACHE_ARTIFACTS_FILE
    with blob.open("wb") as handle:
        for offset, data in ((3 * mib, b"head" * 1000), (40 * mib + 7, b"\x01" * (2 * mib))):
            handle.seek(offset)
            handle.write(data)
    os.truncate(blob, 64 * mib)
    assert hand_over(source, target).copied == 64 * mib
    copied = target / CACHE_ARTIFACTS_FILE
    assert copied.read_bytes() == blob.read_bytes()
    assert copied.stat().st_blocks * 512 <= blob.stat().st_blocks * 512 + mib


def variant(cost_fields: dict, payoff: Payoff | None = None) -> Variant:
    records = [process("cold", 17.4), process("artifacts", 15.6), process("warm", 3.2)]
    cost = dataclasses.replace(compile_cost(records, CompileCounts()), wall_s=17.4, **cost_fields)
    return Variant(
        id="default",
        mode="default",
        compile_target="model",
        status=Status.OK,
        compile_cost=cost,
        payoff=payoff,
    )


def test_the_levers_in_words() -> None:
    payoff = Payoff(
        decision=Decision.UNDECIDED,
        steps_per_run=10_000,
        warm_break_even_steps=BreakEvenInterval(low=900, estimate=4_213, high=None),
        artifacts_break_even_steps=BreakEvenInterval(low=5_000, estimate=19_870, high=None),
    )
    measured = variant({"artifacts_bytes": 331_973}, payoff)
    assert lever_sentence(SimpleNamespace(variants=[measured])) == (
        "default: cold 17.4 s; warm cache 3.2 s (break-even after 4,200 steps); shipped cache "
        "artifacts 15.6 s, 0.3 MB (break-even after 20,000 steps)"
    )
    # As the child records it now (a code and the torch it names), and as an older
    # document recorded it (the child's sentence): the same words.
    coded = {"artifacts_absent": Absence.NO_SAVE_CACHE_ARTIFACTS, "absent_torch": "2.4.1"}
    recorded = {"artifacts_absent": "torch 2.4.1 has no torch.compiler.save_cache_artifacts"}
    for absent in (variant(coded), variant(recorded)):
        assert lever_sentence(SimpleNamespace(variants=[absent])) == (
            "default: cold 17.4 s; warm cache 3.2 s; shipped cache artifacts absent: torch 2.4.1 "
            "has no torch.compiler.save_cache_artifacts"
        )
    assert lever_sentence(SimpleNamespace(variants=[variant({})])) is None  # not asked


def test_the_recommendation_names_the_cheapest_lever_that_pays_off_inside_the_run() -> None:
    """results/ names the lever by its code; report/ says it with the lever's own interval."""
    from compilegate.report.decision_words import _lever
    from compilegate.results.model import Caveat, RegionalLever
    from compilegate.results.recommendation import _cheapest_lever

    payoff = Payoff(
        decision=Decision.STAY_EAGER,
        steps_per_run=10_000,
        break_even_steps=BreakEvenInterval(low=8_000, estimate=14_000, high=None),
        artifacts_break_even_steps=BreakEvenInterval(low=3_000, estimate=5_000, high=9_000),
    )
    regional = RegionalLever(
        break_even_steps=BreakEvenInterval(low=2_000, estimate=4_000, high=9_500)
    )
    both = dataclasses.replace(variant({}), regional=regional)
    assert _cheapest_lever(payoff, both) == (Caveat.LEVER_REGIONAL,)
    advice = Recommendation(artifacts_break_even_steps=payoff.artifacts_break_even_steps)
    assert _lever(advice, both, _cheapest_lever(payoff, both)) == (
        "; the cheapest lever that pays off inside the run: compiling regionally (break-even "
        "after 4,000 steps, 95 % interval 2,000–9,500)"
    )
    assert _cheapest_lever(payoff, variant({})) == (Caveat.LEVER_CACHE_ARTIFACTS,)
    assert "shipping the cache artifacts (break-even after 5,000" in _lever(
        advice, variant({}), (Caveat.LEVER_CACHE_ARTIFACTS,)
    )
    shorter = dataclasses.replace(payoff, steps_per_run=8_000)  # neither interval inside
    assert _cheapest_lever(shorter, both) == ()


def test_a_speedup_interval_that_bounds_nothing_is_not_printed_in_full() -> None:
    """One process under heavy load: `46.7× (0.0–833561164265529984.0)` on the comment."""
    from compilegate.report.wording import speedup_text

    assert speedup_text(46.7, 0.0, 8.3e17) == "46.7× (0.0–100+)"
    assert speedup_text(3.5, 1.2, 99.0) == "3.5× (1.2–99.0)"
    assert speedup_text(0.92, 0.88, 0.97) == "0.92× (0.88–0.97)"
