"""A distributed step in words (the facts: each variant's `distributed`, config `distributed`),
one sentence a step:

    DDP, 2 ranks over gloo, buckets of 2 MB: default 3 DDP splits at gradient-bucket
    boundaries (expected, not graph breaks); every rank 1 graph break, 0 recompiles

A split and a graph break are never the same words: the split is what DDP asks of Dynamo,
a graph break is the code's.
"""

from __future__ import annotations

from ..results.model import DistributedRun, RankRecord, Step, Variant

WRAPPER_NAMES = {"ddp": "DDP", "fsdp2": "FSDP2"}


def distributed_sentence(step: Step) -> str | None:
    """How the step ran distributed and what its ranks compiled; None for a one-process step."""
    runs = [(variant, variant.distributed) for variant in step.variants if variant.distributed]
    if not runs:
        return None
    first = runs[0][1]
    assert first is not None
    clauses = [_variant(variant, run) for variant, run in runs if run is not None]
    return f"{_group(first)}: " + "; ".join(clauses)


def _group(run: DistributedRun) -> str:
    wrapper = WRAPPER_NAMES.get(run.wrapper, run.wrapper)
    buckets = f", buckets of {run.bucket_cap_mb:g} MB" if run.bucket_cap_mb is not None else ""
    return f"{wrapper}, {plural(run.world_size, 'rank')} over {run.backend}{buckets}"


def _variant(variant: Variant, run: DistributedRun) -> str:
    parts = []
    if run.ddp_splits is not None:
        if run.ddp_splits:
            parts.append(
                f"{plural(run.ddp_splits, 'DDP split')} at gradient-bucket boundaries "
                "(expected, not graph breaks)"
            )
        else:
            parts.append("no DDP split (every graph fits one gradient bucket)")
    parts.append(_ranks(run.ranks))
    compiles = [rank.compile_s for rank in run.ranks if rank.compile_s is not None]
    if len(compiles) > 1:
        low, high = f"{min(compiles):.1f}", f"{max(compiles):.1f}"
        spread = f"{low} s on every rank" if low == high else f"{low}–{high} s across ranks"
        parts.append(f"cold compile {spread}")
    ops = {rank.aten_ops for rank in run.ranks if rank.aten_ops is not None}
    if len(ops) > 1:
        each = ", ".join(f"rank {rank.rank} {rank.aten_ops:,}" for rank in run.ranks)
        parts.append(f"ATen ops of one compiled step differ: {each}")
    if run.ranks_agree is False:
        parts.append("the ranks' parameters differ after the compiled steps")
    return f"{variant.id} " + "; ".join(parts)


def _ranks(ranks: tuple[RankRecord, ...]) -> str:
    """`every rank 1 graph break, 0 recompiles`, or each rank's where they differ."""
    said = {_rank_counts(rank) for rank in ranks}
    if len(said) == 1:
        return f"every rank {said.pop()}"
    return ", ".join(f"rank {rank.rank}: {_rank_counts(rank)}" for rank in ranks)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _rank_counts(rank: RankRecord) -> str:
    if rank.status != "ok":
        return f"failed ({rank.error})"
    breaks = (
        "graph breaks not counted"
        if rank.graph_breaks is None
        else plural(rank.graph_breaks, "graph break")
    )
    recompiles = "" if rank.recompiles is None else f", {plural(rank.recompiles, 'recompile')}"
    return breaks + recompiles
