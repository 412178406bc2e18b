"""What the report says of a child's diagnostics (child/diagnostics_report.py records facts
only since issue 53; report/degraded_notes.py words them): its degraded notes and fallback
reasons, read as a document's variant is read."""

from __future__ import annotations

import json
from typing import Any

from compilegate.report.degraded_notes import degraded_notes, fallback_reasons
from compilegate.results.model import Status, Variant, with_part


def said(report: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(degraded notes, fallback reasons) of a child's diagnostics report."""
    bare = Variant(id="default", mode="default", compile_target="model", status=Status.OK)
    variant = with_part(bare, json.loads(json.dumps(report)))
    return list(degraded_notes(variant)), list(fallback_reasons(variant))
