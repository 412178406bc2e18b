"""Every word of a numerics check that reached a verdict (reason `compared`): which tensors
differed, and why there was no float64 reference, from the figures the child records
(child/numerics.py: `checked`, `failed`, `reference_error`, `reference_disagreement`,
`cosine_min`). Before issue 53's last items the child wrote them as sentences (`reason`,
and a disagreement in `reference_error`); those documents are said as recorded, and these
words are those sentences, figure for figure.
"""

from __future__ import annotations

from ..results.model import DisagreementKind, Numerics, ReferenceDisagreement

# The failed tensors a check's words name (the rest: "and N more").
TENSORS_NAMED = 5
# Why there was no reference, as the record bounds it (schema: reference_error maxLength).
REFERENCE_WHY_CHARS = 240


def compared_words(numerics: Numerics) -> str | None:
    """`2 of 9 tensors differ beyond tolerance: loss, fc.weight.grad; no float64 reference
    (…); judged by allclose, else cosine >= 0.99`; None for a pass with its reference."""
    reasons = []
    failed = numerics.failed or ()
    if failed:
        shown = ", ".join(failed[:TENSORS_NAMED])
        if len(failed) > TENSORS_NAMED:
            shown += f" and {len(failed) - TENSORS_NAMED} more"
        checked = len(numerics.checked or ())
        reasons.append(f"{len(failed)} of {checked} tensors differ beyond tolerance: {shown}")
    why = reference_why(numerics.reference_error, numerics.reference_disagreement)
    if why is not None:
        reasons.append(
            f"no float64 reference ({why}); judged by allclose, else cosine >= "
            f"{numerics.cosine_min}"
        )
    return "; ".join(reasons) or None


def reference_why(
    reference_error: str | None, disagreement: ReferenceDisagreement | None
) -> str | None:
    """Why a check had no float64 reference: the error its float64 copy raised
    (`reference_error`; an older document's disagreement in words), or how that copy's loss
    was not eager's; None when it had one (or the record says nothing)."""
    if disagreement is not None:
        return disagreement_words(disagreement)[:REFERENCE_WHY_CHARS]
    return reference_error


def disagreement_words(found: ReferenceDisagreement) -> str:
    """`its loss differs from eager's by 0.0013 (relative) at iteration 0, where rounding
    allows 0.001: …`, or `its loss is nan at iteration 1 where eager's is 2.5`."""
    if found.kind is DisagreementKind.NOT_FINITE:
        return (
            f"its loss is {_loss(found.loss)} at iteration {found.iteration} where eager's is "
            f"{_loss(found.eager_loss)}"
        )
    return (
        f"its loss differs from eager's by {found.relative or 0.0:.2g} (relative) at iteration "
        f"{found.iteration}, where rounding allows {found.allowed or 0.0:g}: it did not compute "
        "the same step (does the step draw random numbers that follow the dtype, e.g. "
        "randn_like?)"
    )


def _loss(value: float | str | None) -> str:
    """A recorded loss as Python prints a float (`nan`, `inf`, `2.5`)."""
    if value is None:
        return "(not recorded)"
    return str(value) if isinstance(value, str) else str(float(value))
