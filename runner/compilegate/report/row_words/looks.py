"""Rows to look at: failing, inconclusive and accepted ones, and passing rows that still need
a look (⚠️ in every table, on the first screen): exact counts that moved within their
tolerance (moved_counts.py), and a numerics check that passed without its float64 reference
(numerics_reference.py), as their family found them (WordedRow.look). Neither changes the
exit code."""

from __future__ import annotations

from ...gate.verdict import MetricVerdict
from .. import wording as w
from .worded import WordedRow


def needs_a_look(row: MetricVerdict, worded: WordedRow) -> bool:
    """Failing, inconclusive, accepted: and a pass that needs a look all the same (exact
    counts that moved, numerics without its float64 reference: `worded.look`, which its
    family found). The rows a comment's first screen lists in its table of rows to look at."""
    if row.verdict in w.FAILING or row.verdict in ("inconclusive", "accepted"):
        return True
    return worded.look is not None
