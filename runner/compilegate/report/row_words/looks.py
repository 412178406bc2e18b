"""Passing rows that still need a look (⚠️ in every table, on the first screen): exact counts
that moved within their tolerance (moved_counts.py), and a numerics check that passed
without its float64 reference (numerics_reference.py). Neither changes the exit code."""

from __future__ import annotations

from ...gate.verdict import MetricVerdict, Verdict
from .. import wording as w
from .moved_counts import moved_within_tolerance
from .numerics_reference import of_row


def passes_with_a_look(row: MetricVerdict) -> bool:
    """A passing row that gets ⚠️ all the same."""
    if moved_within_tolerance(row) is not None:
        return True
    return row.verdict is Verdict.PASS and of_row(row) is not None


def needs_a_look(row: MetricVerdict) -> bool:
    """Failing, inconclusive, accepted: and a pass that needs a look all the same (exact
    counts that moved, numerics without its float64 reference). The rows a comment's first
    screen lists in its table of rows to look at."""
    if row.verdict in w.FAILING or row.verdict in ("inconclusive", "accepted"):
        return True
    return passes_with_a_look(row)
