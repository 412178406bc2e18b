"""Every word of why a variant was not wholly compiled: the child's own reasons (worded
from its facts by degraded_notes.py; an older document's `degraded`, said as recorded),
its failed diagnostics pass (`diagnostics_error`) and the keys of its diagnostics that
were refused because they named what was measured (`refused_diagnostics`,
results/document.py)."""

from __future__ import annotations

from collections.abc import Sequence

from ..results.model import Variant
from .absence_words import diagnostics_failed_words
from .degraded_notes import PlacedNote, placed_notes

MAX_KEYS_CHARS = 200


def refused_words(keys: Sequence[str]) -> str:
    """The refusal, as a document from before it was recorded as keys said it."""
    return f"diagnostics tried to overwrite measured keys: {', '.join(keys)[:MAX_KEYS_CHARS]}"


def degraded_reasons(variant: Variant) -> list[str]:
    """Why the variant was not wholly compiled, the child's reasons first."""
    return [note.text for note in placed_reasons(variant)]


def placed_reasons(variant: Variant) -> list[PlacedNote]:
    """degraded_reasons, each with the places (`model.py:42`) it names: none for a failed
    pass or refused keys (they name no break's place)."""
    refused = [refused_words(variant.refused_diagnostics)] if variant.refused_diagnostics else []
    error = variant.diagnostics_error
    failed = [diagnostics_failed_words(error)] if error is not None else []
    return [*placed_notes(variant), *(PlacedNote(words, ()) for words in (*failed, *refused))]
