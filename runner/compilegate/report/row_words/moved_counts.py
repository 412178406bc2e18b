"""Exact counts that moved while their row passed: shown, never called "unchanged".

Step work and compile work are counts, the same on any machine and under any load: a change
of one op is a real change. The tolerance (`step_work_growth_pct`, `compile_work_growth_pct`)
decides pass or fail; it does not hide the change. A passing row of either whose judged
counts moved gets ⚠️ in every table, a reason under the first screen's table with each
count's exact change, and a clause in the headline (`passes, but step work moved: ATen ops
+34 (+1.0 %), FLOPs +8,000 (+<0.1 %), within the 2 % tolerance`). Ten pull requests that
each add 1 % stay in sight (issue 54, finding 4).

Only counts the row judged: a count reported and not gated (across torch versions, under
max-autotune) moves for reasons of its own, and its row says so already. Which counts those
are is each family's to say (step_work.py, compile_cost.py: `…_said`); this module holds the
value and its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...gate.verdict import MetricVerdict, Verdict

METRICS = ("step_work", "compile_work")


@dataclass(frozen=True)
class MovedCount:
    """One judged count of a passing row, by its reader's name, on both sides."""

    name: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before

    def words(self) -> str:
        """`ATen ops +34 (+1.0 %)`."""
        return f"{self.name} {self.delta:+,} ({pct_words(self.delta, self.before)})"


@dataclass(frozen=True)
class MovedWithinTolerance:
    """The judged counts of a passing row that moved, and the tolerance they stayed in."""

    counts: tuple[MovedCount, ...]
    tolerance_pct: float

    def words(self) -> str:
        """`ATen ops +34 (+1.0 %), FLOPs +8,000 (+<0.1 %), within the 2 % tolerance`."""
        listed = ", ".join(count.words() for count in self.counts)
        return f"{listed}, within the {self.tolerance_pct:g} % tolerance"


def may_need_a_look(row: MetricVerdict) -> bool:
    """Whether a row's moved counts are its look: a passing, gated step-work or compile-work
    row (its family, step_work.py or compile_cost.py, lists the judged counts that moved)."""
    return row.metric in METRICS and row.verdict is Verdict.PASS and row.gated is not False


def within_tolerance(
    moved: Sequence[MovedCount], tolerance_pct: float | None
) -> MovedWithinTolerance | None:
    """The judged counts that moved and the tolerance they stayed in; None when none moved."""
    if not moved:
        return None
    return MovedWithinTolerance(tuple(moved), tolerance_pct or 0.0)


def pct_words(delta: int, before: int) -> str:
    """`+1.0 %`; `+<0.1 %` for a change too small for one decimal (still a change)."""
    pct = delta / max(before, 1) * 100
    if abs(pct) >= 0.05:
        return f"{pct:+.1f} %".replace("-", "−")
    return ("+" if delta > 0 else "−") + "<0.1 %"
