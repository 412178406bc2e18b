"""Is this comparison paired? Both sides measured in one job, alternating (`run --against`,
`matrix --paired`): then the judges compare process i of the head with process i of the
base (stats.compare_pairs), so that what the machine did while a pair ran cancels.

A paired run writes the same `pairing` record into both sides' documents, with its own id
and each side's role. Two documents are paired only when both carry it, with one id, the
baseline's as `base` and the result's as `head`; anything else (a stored baseline, one
document of a paired run against another run's) is judged as unpaired runs are.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..results.model import ResultDocument


@dataclass(frozen=True)
class Pairing:
    """What the two sides of a paired comparison were."""

    id: str
    base_label: str
    head_label: str
    base_commit: str | None
    head_commit: str | None
    order: str
    mode: str = "processes"

    @classmethod
    def between(cls, baseline: ResultDocument, result: ResultDocument) -> Pairing | None:
        base, head = baseline.pairing, result.pairing
        if base is None or head is None or not base.id or base.id != head.id:
            return None
        if base.role != "base" or head.role != "head":
            return None
        return cls(
            id=base.id,
            base_label=base.base_label or "base",
            head_label=head.head_label or "head",
            base_commit=baseline.environment.commit,
            head_commit=result.environment.commit,
            order=base.order or "A B B A",
            mode=base.mode or "processes",
        )
