"""The compile-work counts a row crossed its tolerance with, as values and their words: the
first one past the limit is the cell's (row_cells.py), all of them the first screen's reason
(`graphs 1 → 5, compile records 1 → 6: grew by more than the 0 % tolerance`). Which counts
they are is compile_cost.py's to find (counts_past_limit)."""

from __future__ import annotations

from dataclasses import dataclass

from ...gate.verdict import Verdict
from .rules import threshold_words


@dataclass(frozen=True)
class CountMoved:
    """One compile-work count, by name, and its values on both sides."""

    name: str
    before: int
    after: int

    def words(self) -> str:
        return f"{self.name} {self.before} → {self.after}"


@dataclass(frozen=True)
class PastLimit:
    """The compile-work counts (in torch's order, as the row lists them) that moved past
    the limit the way the verdict says (grew for a failing row, fell for an improvement),
    and the facts of what the row says after its counts: the per-op values of the last
    count it lists, its verdict and its tolerance."""

    counts: tuple[CountMoved, ...]
    last_per_op: tuple[float, float] | None
    verdict: Verdict
    tolerance_pct: float | None

    @property
    def why(self) -> str:
        """What the row says after its counts, to the end of that clause (`: grew by more
        than …`)."""
        return f"{per_op_words(self.last_per_op)}: {why_words(self.verdict, self.tolerance_pct)}"


def per_op_words(per_op: tuple[float, float] | None) -> str:
    """` (0.3 → 0.297 per op)`, or "" for a count judged as it is."""
    if per_op is None:
        return ""
    return f" ({per_op[0]:.3g} → {per_op[1]:.3g} per op)"


def why_words(verdict: Verdict, tolerance_pct: float | None) -> str:
    """Why the counts have their verdict: `grew by more than the 0 % tolerance
    (deterministic counts)`."""
    said = threshold_words(verdict, tolerance_pct or 0.0, "tolerance")
    return f"{said} (deterministic counts)" if verdict is Verdict.REGRESSION else said
