"""The words of a peak-memory row (gate/judges/memory.py)."""

from __future__ import annotations

from ...gate.judges.memory import MemoryFacts
from ...gate.verdict import MetricVerdict
from ...results.formats import format_value
from .rules import threshold_words


def memory_words(row: MetricVerdict, facts: MemoryFacts) -> str:
    shown = (
        f"peak memory {format_value(facts.baseline_bytes, 'bytes')} → "
        f"{format_value(facts.current_bytes, 'bytes')} ({facts.change_pct:+.1f} %)"
    )
    return f"{shown}: {threshold_words(row.verdict, facts.threshold_pct)}"
