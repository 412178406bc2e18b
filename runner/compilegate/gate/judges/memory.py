"""Memory: peak allocated bytes of the compiled copy (CUDA), growth against the threshold.

Peak memory is not timed in rounds and carries no noise estimate: it is judged on
`peak_memory_growth_pct` alone. On CPU neither run measures it and there is no row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..row_facts_base import RowFactsBase
from ..rules import missing, threshold_verdict
from ..verdict import MetricVerdict
from .sides import Sides


@dataclass(frozen=True)
class MemoryFacts(RowFactsBase):
    """Peak bytes on both sides, their change and the threshold it was judged on."""

    kind: ClassVar[str] = "memory"
    baseline_bytes: int
    current_bytes: int
    change_pct: float
    threshold_pct: float


def judge(sides: Sides) -> list[MetricVerdict]:
    base_bytes, cur_bytes = sides.base.peak_bytes, sides.head.peak_bytes
    subject = sides.subject
    unjudged = missing(subject, "peak_bytes", base_bytes, cur_bytes, positive=True)
    if unjudged is not None or base_bytes is None or cur_bytes is None:
        return [unjudged] if unjudged is not None else []
    threshold_pct = sides.policy.thresholds["peak_memory_growth_pct"]
    change_pct = (cur_bytes - base_bytes) / base_bytes * 100
    verdict = threshold_verdict(change_pct, threshold_pct)
    facts = MemoryFacts(base_bytes, cur_bytes, change_pct, threshold_pct)
    values = (base_bytes, cur_bytes)
    return [
        subject.measured(
            "peak_bytes", verdict, values, "bytes", change_pct, threshold_pct, facts=facts
        )
    ]
