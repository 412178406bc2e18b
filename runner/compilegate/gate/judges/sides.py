"""What one judge sees: the baseline's and this run's documents of one subject, their steps,
the policy (from the baseline side) and the units step times are compared in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...results.model import Eager, ResultDocument, Step, Variant
from ...results.run_health import UnsteadyCause
from ..pairing import Pairing
from ..policy import StepPolicy
from ..rules import Subject
from ..verdict import MetricVerdict

YARDSTICK = "yardstick"
RAW = "raw"


@dataclass(frozen=True)
class SpeedUnits:
    """How two runs' step times are compared: in yardstick units or raw, and why raw.

    yardstick   step times divided by the yardstick timed in the same process
                (child/timing.yardstick): a runner that is slower today moves both
    raw         milliseconds; when the runs used different torch versions, since the
                yardstick is a torch workload and would change with the version under
                test, or when a run did not time the yardstick
    """

    normalisation: str = YARDSTICK
    # (baseline's, this run's) torch when they differ: why the units are raw.
    torch_versions: tuple[str, str] | None = None

    @classmethod
    def between(cls, baseline: ResultDocument, result: ResultDocument) -> SpeedUnits:
        base, cur = baseline.environment.torch, result.environment.torch
        if base and cur and base != cur:
            return cls(RAW, torch_versions=(base, cur))
        return cls()

    @property
    def same_torch(self) -> bool:
        return self.normalisation == YARDSTICK


@dataclass(frozen=True)
class Sides:
    """One subject of the comparison. For a variant, `base`/`head` are the variant entries;
    for the eager rows (subject variant "eager") they are the steps' `eager` entries."""

    subject: Subject
    base: Variant | Eager
    head: Variant | Eager
    base_step: Step
    head_step: Step
    policy: StepPolicy
    units: SpeedUnits
    pairing: Pairing | None = None  # both sides measured in one job, alternating
    # Why this run's own health says its numbers support no verdict (results/run_health.py);
    # empty when the run was steady.
    unsteady: tuple[UnsteadyCause, ...] = ()

    @property
    def paired(self) -> bool:
        return self.pairing is not None

    @property
    def steps(self) -> tuple[Step, Step]:
        return self.base_step, self.head_step

    @property
    def pair(self) -> tuple[Variant | Eager, Variant | Eager]:
        return self.base, self.head

    @property
    def variants(self) -> tuple[Variant, Variant]:
        """The two variant entries, for the judges of a variant (an eager subject has none)."""
        base, head = self.base, self.head
        if not isinstance(base, Variant) or not isinstance(head, Variant):
            raise TypeError(f"{self.subject}: a variant's judge was given the eager entries")
        return base, head


# A judge: one metric family's rows for one subject (none when it measured nothing).
Judge = Callable[[Sides], "list[MetricVerdict]"]
