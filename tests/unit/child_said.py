"""What the report says of a child's diagnostics (child/diagnostics_report.py records facts
only since issue 53; report/degraded_notes.py words them): its degraded notes and fallback
reasons, read as a document's variant is read."""

from __future__ import annotations

import json
from typing import Any

from compilegate.report.degraded_notes import degraded_notes, fallback_reasons, limit_words
from compilegate.results.model import Status, Variant, with_part


def said(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(degraded notes, fallback reasons) of a child's diagnostics report."""
    bare = Variant(id="default", mode="default", compile_target="model", status=Status.OK)
    variant = with_part(bare, json.loads(json.dumps(report)))
    return list(degraded_notes(variant)), list(fallback_reasons(variant))


def limit_said(report: dict[str, Any]) -> str | None:
    """The note on the recompile limit a child's diagnostics report says (its `limit` facts,
    worded by report/degraded_notes.limit_words), None where the limit was not hit."""
    bare = Variant(id="default", mode="default", compile_target="model", status=Status.OK)
    recompiles = with_part(bare, json.loads(json.dumps(report))).recompiles
    limit = recompiles.limit if recompiles is not None else None
    return limit_words(limit) if limit is not None else None
