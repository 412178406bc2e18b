"""What an upgrade changed (issue 54, finding 6): for a version measured on another torch than
the baseline's, every figure of each step that moved between the two versions — compile
time, compile-work counts (guards, graphs, FX nodes …), step work by count and by the ops
that moved it, graph breaks, recompiles, memory, speed — the largest change first, each
with its sign and both exact figures:

    where                  what                 2.13.0 → 2.4.1     change
    transformer · default  guards               408 → 10           −97.5 %
    transformer · default  compile time (wall)  23.7 s → 21.4 s    −9.7 %

Read from the gate rows' values and facts only (never from their words), so the comment's
first screen and `report`'s text say the same. A row the first screen lists among the rows to
look at (failing, ⚠️) is not repeated here: the table is then "what else changed". A
25th-percentile step time repeats its mean and is left to the details; a timed figure
whose change is inside its noise did not measurably move and is not listed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..gate.judges.compile_cost import CompileWorkFacts, WorkJudgement
from ..gate.judges.step_work import StepWorkFacts, StepWorkJudgement
from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import MetricVerdict
from . import wording as w
from .row_cells import reader_values
from .row_words import worded_rows
from .row_words.compile_cost import COUNT_NAMES as COMPILE_COUNT_NAMES
from .row_words.looks import needs_a_look
from .row_words.step_work import COUNT_NAMES as STEP_COUNT_NAMES
from .row_words.worded import WordedRow, WordedRows

# Per step, this many changes on the first screen; the rest counted (every gate row below).
CHANGES_PER_STEP = 10
# Ops named beside a step-work count that moved.
OPS_NAMED = 2
_QUANTILE = re.compile(r"_p\d+$")
# Rows whose figures this table shows another way (the counts inside them) or not at all.
_NOT_FIGURES = frozenset({"compile_work", "step_work", "step", "variant", "torch_state"})


@dataclass(frozen=True)
class Change:
    """One figure that moved between the versions: where, what, both figures as said
    (`408 → 10`), the change as said (`−97.5 %`, `+2`) and its size for the order."""

    where: str
    what: str
    values: str
    change: str
    size: float


@dataclass(frozen=True)
class UpgradeChanges:
    """One version's changes from the baseline's torch, per step largest first."""

    base_torch: str
    torch: str
    changes: tuple[Change, ...]
    more: int  # changes left to the details
    # rows the first screen's table of rows to look at shows already (failing, ⚠️): not
    # repeated here
    said_above: int = 0

    def title(self) -> str:
        what = "What else changed" if self.said_above else "What changed"
        return f"{what} from torch {self.base_torch} to {self.torch}, largest first"

    def header(self) -> tuple[str, ...]:
        return ("where", "what", f"{self.base_torch} → {self.torch}", "change")

    def rows(self) -> list[tuple[str, ...]]:
        return [(c.where, c.what, c.values, c.change) for c in self.changes]

    def counted(self) -> str:
        """`2 figures`: how many moved, shown or left to the details."""
        count = len(self.changes) + self.more
        return f"{count} figure{'s' if count != 1 else ''}"

    def more_line(self) -> str | None:
        if not self.more:
            return None
        return f"and {self.more} smaller changes: each version's “every gate row” below"

    def none_line(self) -> str | None:
        """The line for a version none of whose figures moved, or None when the ones that
        did are all in the table of rows to look at already."""
        if self.said_above:
            return None
        return f"torch {self.base_torch} → {self.torch}: no measured figure moved"


def upgrade_changes(
    run_set: RunSetVerdict, worded: WordedRows | None = None
) -> tuple[UpgradeChanges, ...]:
    """Each version judged against a baseline measured on another torch: what moved
    (`worded`: what report/ says of each row, row_words.worded_rows, made here if not given)."""
    worded = worded or worded_rows(run_set.versions)
    base = run_set.baseline
    run_set_torch = base.environment.torch if base is not None else None
    found = []
    for version in run_set.versions:
        # Its own base's torch where known: a paired version (a plan's leg) was judged
        # against the base measured beside it, not against the run set's first base.
        base_torch = version.base_torch or run_set_torch
        if version.verdict is None or not version.torch or not base_torch:
            continue
        if w.plain_torch(version.torch) == w.plain_torch(base_torch):
            continue
        found.append(_of_version(version, w.plain_torch(base_torch), worded))
    return tuple(found)


def _of_version(version: VersionOutcome, base_torch: str, worded: WordedRows) -> UpgradeChanges:
    assert version.verdict is not None
    by_step: dict[str, list[Change]] = {}
    said_above = 0
    for row in version.verdict.verdicts:
        said = worded.of(row)
        changes = _changes_of(row, said)
        if changes and needs_a_look(row, said):  # in the table of rows to look at, figures too
            said_above += 1
            continue
        by_step.setdefault(row.step, []).extend(changes)
    shown: list[Change] = []
    more = 0
    for changes in by_step.values():
        ordered = sorted(changes, key=lambda c: -c.size)
        shown += ordered[:CHANGES_PER_STEP]
        more += len(ordered[CHANGES_PER_STEP:])
    torch = w.plain_torch(version.torch)
    return UpgradeChanges(base_torch, torch, tuple(shown), more, said_above)


def _changes_of(row: MetricVerdict, worded: WordedRow) -> list[Change]:
    where = w.row_subject(row)
    facts = row.facts
    if isinstance(facts, CompileWorkFacts):
        if facts.judged is not WorkJudgement.JUDGED:
            return []
        return [
            _count(where, COMPILE_COUNT_NAMES.get(c.name, c.name), c.before, c.after)
            for c in facts.changes
            if c.before != c.after
        ]
    if isinstance(facts, StepWorkFacts):
        if facts.judged is not StepWorkJudgement.JUDGED:
            return []
        out = []
        for change in facts.changes:
            if not change.moved:
                continue
            what = f"step {STEP_COUNT_NAMES.get(change.key, change.key)}"
            ops = [_signed(delta) + f" {name}" for name, delta in change.named[:OPS_NAMED]]
            what += f" ({', '.join(ops)})" if ops else ""
            out.append(_count(where, what, change.before, change.after))
        return out
    if row.metric in _NOT_FIGURES or _QUANTILE.search(row.metric):
        return []
    base, now = row.baseline, row.current
    if base is None or now is None or base == now or _within_noise(row):
        return []
    what = w.metric_name(row.metric)
    both_numbers = all(isinstance(v, (int, float)) for v in (base, now))
    if not both_numbers:  # a status that changed (numerics pass → fail): first
        return [Change(where, what, f"{base} → {now}", "changed", math.inf)]
    b, n = float(base), float(now)
    if row.unit == "count":
        return [_count(where, what, int(b), int(n))]
    pct = (n - b) / abs(b) * 100 if b else math.inf
    return [Change(where, what, reader_values(row, worded), _pct(pct), abs(pct))]


def _within_noise(row: MetricVerdict) -> bool:
    """A timed figure whose judged change is inside its noise: not measured to have moved."""
    if row.noise_pct is None or row.change is None:
        return False
    return abs(row.change) <= row.noise_pct


def _count(where: str, what: str, before: int, after: int) -> Change:
    """A count's exact figures and change: `281 → 1,014`, `+261 %`; from 0, `+2`."""
    values = f"{before:,} → {after:,}"
    if before == 0:
        return Change(where, what, values, _signed(after - before), math.inf)
    pct = (after - before) / before * 100
    return Change(where, what, values, _pct(pct), abs(pct))


def _pct(pct: float) -> str:
    if math.isinf(pct):
        return "from 0"
    places = 0 if abs(pct) >= 100 else 1
    return f"{pct:+.{places}f} %".replace("-", "−")


def _signed(count: int) -> str:
    """`+9`, `−1,180`: a count's change with a real minus sign."""
    return f"{count:+,}".replace("-", "−")
