"""A numerics check that ran without its float64 reference: said wherever its verdict is.

The check compares compiled with eager and, where allclose fails, both with a float64 copy
of the step (child/numerics.py). A model that cannot run in float64 (one that hard-codes
float32 in its timestep embedding: "mat1 and mat2 must have the same dtype"), or whose
float64 copy computes another step, has no reference: the check falls back to allclose,
else cosine, against eager — weaker, since an error eager shares is then invisible. The
result records it as fields (`numerics.reference: "none"`, `reference_error`: why,
`compared_by` and `cosine_min`: what was compared instead); `run`'s table, `report`, the
comment's details and its first screen say it beside the verdict, composed here from those
fields (issue 54, finding 5). A passing numerics row whose run checked without its
reference gets ⚠️: the exit code stays the verdict's.

Facts only: the check's `reason` is words for a reader of the JSON and is never read back.
A document written before the fields were recorded (`reference: "none"` alone) is read as
recorded: why is "not recorded", and what was compared is the rule every such check used
(allclose, else cosine) without a threshold it did not record. No verdict rule changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...gate.judges.numerics import CHECKED, NumericsFacts, NumericsSide
from ...gate.verdict import MetricVerdict
from ...results.model import ComparedBy, Numerics, Step
from ..numerics_words import reference_why

NOT_RECORDED = "why not recorded"
# The rule a check without its reference compares by, in words (its threshold added).
FALLBACK_RULE = "allclose, else cosine"
RULE_WORDS = {
    ComparedBy.ALLCLOSE_ELSE_COSINE: FALLBACK_RULE,
    ComparedBy.ALLCLOSE_ELSE_FP64_RMSE: "allclose, else the float64 RMSE ratio",
}
# The headline's clause (report/headline.py).
UNREFERENCED = "numerics checked against eager only (no float64 reference)"


@dataclass(frozen=True)
class WithoutReference:
    """Why the check had no float64 reference, and what it compared instead."""

    why: str
    compared: str

    def words(self) -> str:
        """`checked without its float64 reference (RuntimeError: …): compiled compared with
        eager by allclose, else cosine ≥ 0.99 only`."""
        return (
            f"checked without its float64 reference ({self.why}): compiled compared with "
            f"eager by {self.compared} only"
        )

    def cell(self, status: str) -> str:
        """The numerics cell of a variants table: `pass, no float64 reference`."""
        return f"{status}, no float64 reference"


def of_side(side: NumericsSide) -> WithoutReference | None:
    """A side's numerics that reached a verdict without its float64 reference, or None:
    from the recorded fields alone (`reference_error` is at most 240 characters: the
    schema's bound, as the child cuts it)."""
    if side.status not in CHECKED or side.reference != "none":
        return None
    why = reference_why(side.reference_error, side.reference_disagreement)
    return WithoutReference(why or NOT_RECORDED, _compared(side))


def of_numerics(numerics: Numerics | None) -> WithoutReference | None:
    """A variant's numerics that reached a verdict without its float64 reference, or None."""
    return of_side(NumericsSide.of(numerics))


def numerics_cell(numerics: Numerics | None) -> str:
    """A variants table's numerics cell: `pass`, `pass, no float64 reference`, or `-`."""
    if numerics is None:
        return "-"
    fallback = of_numerics(numerics)
    status = numerics.status.value
    return fallback.cell(status) if fallback is not None else status


def step_notes(step: Step) -> list[tuple[str, str]]:
    """(the variants, `numerics checked without its float64 reference (…): …`) for each
    reason the step's variants checked without their reference, said once for the variants
    alike."""
    return [(ids, f"numerics {fallback.words()}") for ids, fallback in step_fallbacks(step)]


def step_fallbacks(step: Step) -> list[tuple[str, WithoutReference]]:
    """(the variants, why they had no float64 reference and what they compared instead),
    once for the variants alike."""
    found: dict[WithoutReference, list[str]] = {}
    for variant in step.variants:
        fallback = None if variant.failed else of_numerics(variant.numerics)
        if fallback is not None:
            found.setdefault(fallback, []).append(variant.id)
    return [(", ".join(ids), fallback) for fallback, ids in found.items()]


def of_row(row: MetricVerdict) -> WithoutReference | None:
    """A numerics gate row whose run checked without its float64 reference, or None."""
    facts = row.facts
    if row.metric != "numerics" or not isinstance(facts, NumericsFacts):
        return None
    return of_side(facts.run)


def _compared(side: NumericsSide) -> str:
    """`allclose, else cosine ≥ 0.99`: the recorded rule and threshold; a document that
    recorded neither compared by allclose, else cosine (the only rule without a reference)."""
    rule = RULE_WORDS[side.compared_by] if side.compared_by is not None else FALLBACK_RULE
    if side.cosine_min is None or side.compared_by is not ComparedBy.ALLCLOSE_ELSE_COSINE:
        return rule
    return f"{rule} ≥ {side.cosine_min:g}"
