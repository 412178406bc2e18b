"""A numerics check that ran without its float64 reference: said wherever its verdict is.

The check compares compiled with eager and, where allclose fails, both with a float64 copy
of the step (child/numerics.py). A model that cannot run in float64 (one that hard-codes
float32 in its timestep embedding: "mat1 and mat2 must have the same dtype"), or whose
float64 copy computes another step, has no reference: the check falls back to allclose,
else cosine, against eager — weaker, since an error eager shares is then invisible. The
result records it (`numerics.reference: "none"` and the reason: `no float64 reference (…);
judged by allclose, else cosine >= 0.99`); `run`'s table, `report`, the comment's details
and its first screen say it beside the verdict, with that reason and what was compared
instead (issue 54, finding 5). A passing numerics row whose run checked without its
reference gets ⚠️: the exit code stays the verdict's.

Read from the document's own words (the gate row keeps the check's reason in its facts):
no verdict rule changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...gate.judges.numerics import CHECKED, NumericsFacts
from ...gate.verdict import MetricVerdict
from ...results.model import Numerics, Step
from ..escape import shortened

# How child/numerics.summarize_checks says it, inside its reason.
ABSENT = "no float64 reference ("
JUDGED_BY = "; judged by "
WHY_CHARS = 240  # a torch error may be long: its start says what it is
NOT_RECORDED = "why not recorded"
FALLBACK_RULE = "allclose, else cosine"
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


def of_reason(reason: str | None) -> WithoutReference | None:
    """From a numerics reason that says `no float64 reference (…); judged by …`, or None."""
    if not reason:
        return None
    start = reason.find(ABSENT)
    if start < 0:
        return None
    opened = start + len(ABSENT)
    end = _closing(reason, opened)
    why = reason[opened:end].strip() if end is not None else reason[opened:].strip()
    rest = reason[end + 1 :] if end is not None else ""
    compared = FALLBACK_RULE
    if rest.startswith(JUDGED_BY):
        compared = rest[len(JUDGED_BY) :].split(";", 1)[0].strip().replace(">=", "≥")
    return WithoutReference(shortened(why or NOT_RECORDED, WHY_CHARS), compared)


def of_numerics(numerics: Numerics | None) -> WithoutReference | None:
    """A variant's numerics that reached a verdict without its float64 reference, or None."""
    if numerics is None or numerics.status not in CHECKED:
        return None
    found = of_reason(numerics.reason)
    if found is None and numerics.reference == "none":
        return WithoutReference(NOT_RECORDED, FALLBACK_RULE)
    return found


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
    said: dict[str, list[str]] = {}
    for variant in step.variants:
        fallback = None if variant.failed else of_numerics(variant.numerics)
        if fallback is not None:
            said.setdefault(f"numerics {fallback.words()}", []).append(variant.id)
    return [(", ".join(ids), words) for words, ids in said.items()]


def of_row(row: MetricVerdict) -> WithoutReference | None:
    """A numerics gate row whose run checked without its float64 reference, or None."""
    facts = row.facts
    if row.metric != "numerics" or not isinstance(facts, NumericsFacts):
        return None
    if facts.run.status not in CHECKED:
        return None
    return of_reason(facts.run.reason)


def _closing(text: str, opened: int) -> int | None:
    """The index of the `)` that closes the `(` before `opened` (reasons nest them)."""
    depth = 1
    for index in range(opened, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return None
