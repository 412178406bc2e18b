"""CUDA graphs skipped: the compiled graphs Inductor ran without CUDA graphs, against the
baseline, for a variant that asks for them (its `cuda_graphs`: mode reduce-overhead or
max-autotune, backend cudagraphs; child/cuda_graph_skips.py records it).

    metric             direction          threshold
    cuda_graph_skips   fewer is better    none: a skip the baseline did not have fails

Not a graph break: the code stays compiled, but each skipped graph runs without its CUDA
graph, so a launch-bound step loses what reduce-overhead was chosen for, and only a slower
step would say so. The row carries torch's reason and where (a mutated input at
model.py:88), apart from the graph-break rows.

On a step measured on a CPU Inductor skips every graph (CUDA graphs need a CUDA device): the
row says so once, reported and never gated. A baseline from before skips were recorded:
`new`. A run without the record when the baseline has one: `missing`, with the reason its
diagnostics give. Neither side recorded: no row (a variant that does not ask for graphs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ...results.model import CudaGraphs, CudaGraphSkip, Variant
from ..row_facts_base import RowFactsBase
from ..rules import Defect, MissingFacts, Side, Subject, diagnostics_doubt
from ..verdict import MetricVerdict, Verdict
from .sides import Sides

METRIC = "cuda_graph_skips"
CUDA = "cuda"


@dataclass(frozen=True)
class SkipAt:
    """One reason Inductor skipped CUDA graphs, as the document records it: torch's words,
    where (None when torch gave no stack trace) and how many skips it gave it for."""

    reason: str
    file: str | None
    line: int | None
    count: int

    @classmethod
    def of(cls, skip: CudaGraphSkip) -> SkipAt:
        return cls(skip.reason, skip.file, skip.line, skip.count)


class CudaGraphOutcome(str, Enum):
    NO_CUDA = "no_cuda"  # measured on a device without CUDA graphs: every graph skipped
    BASELINE_PREDATES = "baseline_predates"  # the baseline has no record to compare with
    MORE = "more"
    FEWER = "fewer"
    SAME = "same"


@dataclass(frozen=True)
class CudaGraphFacts(RowFactsBase):
    """The skips before (None: the baseline predates the record) and now; this run's reasons
    (`reasons`) and those of them the baseline did not give (`new`: by reason and file, so
    a reason whose line only moved is not new); the device the step ran on."""

    kind: ClassVar[str] = "cuda_graphs"
    outcome: CudaGraphOutcome
    before: int | None
    after: int
    reasons: tuple[SkipAt, ...] = ()
    new: tuple[SkipAt, ...] = ()
    device: str | None = None


def judge(sides: Sides) -> list[MetricVerdict]:
    base, cur = sides.pair
    if not isinstance(base, Variant) or not isinstance(cur, Variant):
        return []  # eager compiles nothing
    row = judge_skips(sides.subject, base.cuda_graphs, cur, sides.head_step.device)
    return [row] if row is not None else []


def judge_skips(
    subject: Subject, base: CudaGraphs | None, cur_variant: Variant, device: str | None
) -> MetricVerdict | None:
    """The row of one variant (None when neither side recorded its CUDA graphs)."""
    cur = cur_variant.cuda_graphs
    if cur is None:
        if device != CUDA:
            return None  # nothing recorded where nothing could be gated
        return _missing(subject, base, cur_variant)
    reasons = tuple(SkipAt.of(skip) for skip in cur.reasons)
    before = base.skips if base is not None else None
    if device != CUDA:
        facts = CudaGraphFacts(CudaGraphOutcome.NO_CUDA, before, cur.skips, reasons, device=device)
        return subject.row(
            METRIC,
            Verdict.PASS,
            unit="count",
            baseline=before,
            current=cur.skips,
            gated=False,
            facts=facts,
        )
    if base is None:
        outcome = CudaGraphOutcome.BASELINE_PREDATES
        facts = CudaGraphFacts(outcome, None, cur.skips, reasons, reasons, CUDA)
        return subject.row(METRIC, Verdict.NEW, unit="count", current=cur.skips, facts=facts)
    new = tuple(SkipAt.of(s) for s in new_reasons(base, cur))
    increase = cur.skips - base.skips
    if increase > 0:
        verdict, outcome = Verdict.REGRESSION, CudaGraphOutcome.MORE
    elif increase < 0:
        verdict, outcome = Verdict.IMPROVEMENT, CudaGraphOutcome.FEWER
    else:
        verdict, outcome = Verdict.PASS, CudaGraphOutcome.SAME
    facts = CudaGraphFacts(outcome, base.skips, cur.skips, reasons, new, CUDA)
    return subject.measured(
        METRIC, verdict, (base.skips, cur.skips), "count", float(increase), 0.0, facts=facts
    )


def new_reasons(base: CudaGraphs, cur: CudaGraphs) -> list[CudaGraphSkip]:
    """This run's reasons the baseline did not give, by reason and file (a skip whose line
    only moved, an edit above it, is the same skip)."""
    known = {(skip.reason, skip.file) for skip in base.reasons}
    return [skip for skip in cur.reasons if (skip.reason, skip.file) not in known]


def _missing(subject: Subject, base: CudaGraphs | None, cur: Variant) -> MetricVerdict | None:
    """The baseline recorded this variant's CUDA graphs and this run did not (None when
    neither did): `missing`, with why when the variant says (a failed diagnostics pass)."""
    if base is None:
        return None
    facts = MissingFacts(Side.RUN, Defect.ABSENT, cause=diagnostics_doubt(cur))
    return subject.row(METRIC, Verdict.MISSING, baseline=base.skips, facts=facts)
