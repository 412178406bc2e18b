"""What the speed judges (speed.py, speed_medians.py, distribution.py) found about a row,
as values: the report words them (report/row_words/speed.py).

The row itself carries the values compared (`baseline`, `current` in `unit`: yardsticks,
ms or x), the change, the threshold and the noise; these facts add what was compared and how:

    statistic        what of each side was compared (each process's fastest iteration, its
                     25th percentile, or each run's median where no process records exist)
    rule_verdict     what the noise rule said; a row only reported keeps it here, its own
                     verdict is then `pass`
    processes        (baseline's, this run's) process counts; with `paired`, pairs
    raw_because      why step times were compared in raw milliseconds
    yardstick        the yardstick step times were divided by, and each candidate's spread
                     where there were two to choose from (results/yardsticks.py)
    raw_ms           the milliseconds a yardstick-unit row's values came from, and their change
    history          the default-branch runs the row was judged against (gate/history.py)
    gross_bound_pct  the bound a step time failed beyond against one stored run
    not_judged       why a step time may not fail the job here (step_time_gate)
    disturbed        the processes left out for a load spike inside them (speed.undisturbed)
    noise_unmeasured the runs that measured no noise of their own (speed_medians.py)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ..row_facts_base import RowFactsBase
from ..rules import Side
from ..verdict import Verdict


class Statistic(str, Enum):
    """What of each side a speed row compares."""

    FASTEST = "fastest"  # each process's fastest iteration
    P25 = "p25"  # each process's 25th percentile (distribution.py)
    MEDIAN = "median"  # each run's median: no process records, or one a side


class RawBecause(str, Enum):
    """Why step times were compared in raw milliseconds, not in yardstick units."""

    TORCH_VERSIONS = "torch_versions"  # the yardstick runs on torch: no fixed unit across them
    YARDSTICK_NOT_TIMED = "yardstick_not_timed"  # a process did not time it


class NotJudged(str, Enum):
    """Why an absolute step time is reported and may not fail the job (speed.step_time_gate)."""

    UNSTEADY_RUN = "unsteady_run"  # this run's health says its times support no verdict
    UNSTEADY_BASELINE = "unsteady_baseline"  # the baseline's times came from an unsteady run
    SHORT_HISTORY = "short_history"  # too few default-branch runs to know their drift


@dataclass(frozen=True)
class Ungated:
    """Why the row is reported only; for a short history, how many default-branch runs are
    recorded (`recorded`) of the `needed` ones."""

    reason: NotJudged
    recorded: int
    needed: int


@dataclass(frozen=True)
class HistoryFacts:
    """The default branch's last `runs` runs: their spread from run to run, and the noise
    that predicts for one more (both percent)."""

    runs: int
    spread_pct: float
    noise_pct: float


@dataclass(frozen=True)
class Disturbed:
    """A process left out: its eager twins this far apart (a ratio) on `side`."""

    side: Side
    twins_ratio: float


@dataclass(frozen=True)
class SpeedFacts(RowFactsBase):
    kind: ClassVar[str] = "speed"
    statistic: Statistic
    rule_verdict: Verdict
    processes: tuple[int, int] | None = None
    paired: bool = False
    raw_because: RawBecause | None = None
    torch_versions: tuple[str, str] | None = None
    yardstick: str | None = None
    # (yardstick, spread percent) of each candidate, where more than one was timed by
    # every process and the pick was between them; empty otherwise.
    yardstick_spreads_pct: tuple[tuple[str, float], ...] = ()
    raw_ms: tuple[float, float] | None = None
    raw_change_pct: float | None = None
    history: HistoryFacts | None = None
    gross_bound_pct: float | None = None
    not_judged: Ungated | None = None
    disturbed: tuple[Disturbed, ...] = ()
    noise_unmeasured: tuple[Side, ...] = ()
