"""Every word of why a variant was not wholly compiled: the child's own reasons (its
`degraded`, its sentences, said as recorded), its failed diagnostics pass
(`diagnostics_error`) and the keys of its diagnostics that were
refused because they named what was measured (`refused_diagnostics`, results/document.py)."""

from __future__ import annotations

from collections.abc import Sequence

from ..results.model import Variant
from .absence_words import diagnostics_failed_words

MAX_KEYS_CHARS = 200


def refused_words(keys: Sequence[str]) -> str:
    """The refusal, as a document from before it was recorded as keys said it."""
    return f"diagnostics tried to overwrite measured keys: {', '.join(keys)[:MAX_KEYS_CHARS]}"


def degraded_reasons(variant: Variant) -> list[str]:
    """Why the variant was not wholly compiled, the child's reasons first."""
    refused = [refused_words(variant.refused_diagnostics)] if variant.refused_diagnostics else []
    error = variant.diagnostics_error
    failed = [diagnostics_failed_words(error)] if error is not None else []
    return [*(variant.degraded or ()), *failed, *refused]
