"""What every judge shares: the subject of a row, the noise rule, and the `missing` rule.

The noise rule (speed, compile CPU time): each run states its noise as a 95 % half-width in
percent, or both runs' samples are pooled into one two-sample t interval (judges/speed.py,
judges/compile_cost.py). Then

    worse  by > threshold and > noise,
           and (noise ≤ 2 × threshold
                or change > 2 × noise)     → regression
    worse  by > threshold, but ≤ noise,
           or noise > 2 × threshold
           and change ≤ 2 × noise          → inconclusive, stating the smallest change
                                             these two runs can detect (= noise)
    better by > threshold and > noise,
           and (noise ≤ 2 × threshold
                or change > 2 × noise)     → improvement
    otherwise                              → pass (a gain inside the noise says so)

"Beyond the threshold" makes a change matter, "beyond the noise" makes it real, and a
noise at most twice the threshold (DECIDABLE_NOISE_FACTOR) makes the runs able to decide
the threshold at all; a regression needs all three. A row whose noise is wider cannot
decide its threshold whatever it measured (on a busy runner a same-commit rerun landed
+52 % off with ±60 % noise): it is `inconclusive`, never a failure beside "too noisy".
When two runs' noises are independent estimates, the noise of the comparison is their root
sum of squares.

The missing rule: a gated metric that cannot be judged — measured on one side only, or not
a finite number (NaN compares false with everything, so it would read as a pass) — is
`missing`, which fails the job; a metric neither run measured (peak memory on CPU) has no
row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from ..results.model import Variant
from .row_facts_base import RowFactsBase
from .verdict import MetricVerdict, Verdict

HIGHER_IS_BETTER = "higher_is_better"
LOWER_IS_BETTER = "lower_is_better"
MUST_PASS = "must_pass"


@dataclass(frozen=True)
class Subject:
    """What a row is about: a step, and a variant of it ("eager", or None for the whole step)."""

    step: str
    variant: str | None = None

    def row(self, metric: str, verdict: Verdict | str, **fields: Any) -> MetricVerdict:
        """A row; a percent change judged against a threshold says whether its noise could
        decide that threshold at all."""
        threshold = fields.get("threshold")
        if fields.get("change_unit") == "pct" and threshold is not None:
            fields.setdefault(
                "decidable",
                decides_threshold(fields.get("noise_pct"), threshold, fields.get("change")),
            )
        return MetricVerdict(self.step, self.variant, metric, Verdict(verdict), **fields)

    def measured(
        self,
        metric: str,
        verdict: Verdict | str,
        values: tuple[Any, Any],
        unit: str,
        change: float,
        threshold: float,
        **fields: Any,
    ) -> MetricVerdict:
        """A row with (baseline, current) values; lower is better unless `direction` says so."""
        fields.setdefault("direction", LOWER_IS_BETTER)
        fields.setdefault("change_unit", "count" if unit == "count" else "pct")
        return self.row(
            metric,
            verdict,
            unit=unit,
            baseline=values[0],
            current=values[1],
            change=change,
            threshold=threshold,
            **fields,
        )


# -- the noise rule ---------------------------------------------------------------------------


def combined_noise_pct(base_noise_pct: float | None, cur_noise_pct: float | None) -> float | None:
    """Root sum of squares of the two runs' noise; None when neither run measured any."""
    known = [n for n in (base_noise_pct, cur_noise_pct) if n is not None]
    return math.sqrt(sum(n * n for n in known)) if known else None


# A comparison decides a threshold when a change that clearly matters — twice the
# threshold — would stand out of its noise. Wider, and a same-commit rerun on a busy runner
# lands beyond the threshold and "beyond the noise" whenever the noise was underestimated
# (seen: +52 % at ±60 %); tighter (the noise within the threshold itself) and a 10 % slowdown
# measured in 4 + 4 processes on a shared 2-core runner is caught in 27-40 % of runs, not
# ≥ 80 % (tests/unit/gate/test_noise_simulation.py).
DECIDABLE_NOISE_FACTOR = 2.0
# A change more than DECISIVE_MARGIN × its noise is decided however wide that noise is next
# to the threshold: the noise would have to be underestimated twice over for the machine to
# explain it (the busy-runner rerun that made the rule above was +79 % at ±60 %, an
# underestimate of 1.3× at least). Without it a head 5.8× slower in paired mode (+477 % at
# ±20 %, 2 pairs of processes, tests/integration/test_run_against.py) read inconclusive.
DECISIVE_MARGIN = 2.0


def decides_threshold(
    noise_pct: float | None, threshold_pct: float, change_pct: float | None = None
) -> bool:
    """Whether a comparison with this noise can decide the threshold: its smallest
    detectable change (the noise) is at most DECIDABLE_NOISE_FACTOR × the threshold, or the
    change (when given) is beyond DECISIVE_MARGIN × the noise. A deterministic count (no
    noise) always can."""
    if noise_pct is None or noise_pct <= DECIDABLE_NOISE_FACTOR * threshold_pct:
        return True
    return change_pct is not None and abs(change_pct) > DECISIVE_MARGIN * noise_pct


def detectable_change_pct(noise_pct: float | None, threshold_pct: float) -> float:
    """The smallest change this comparison calls a regression, by the rule above: the
    threshold or the noise, whichever is larger, while the noise decides the threshold;
    beyond that, DECISIVE_MARGIN × the noise (a change inside it stays inconclusive)."""
    if noise_pct is None:
        return threshold_pct
    if noise_pct <= DECIDABLE_NOISE_FACTOR * threshold_pct:
        return max(threshold_pct, noise_pct)
    return DECISIVE_MARGIN * noise_pct


def classify_speed_change(
    worse_by_pct: float,
    threshold_pct: float,
    noise_pct: float | None,
    *,
    size_pct: float | None = None,
) -> str:
    """The noise rule; `worse_by_pct` is the change in the bad direction (negative: better).
    `size_pct`, when given, is the change's size for the decisive margin (ratio_size_pct: a
    drop as large as its log); else |worse_by_pct|. Beyond the noise is always judged on
    |worse_by_pct|, the smaller of the two for a drop: on the idle H200 the same commit's
    speedup moved −9.1 % at ±9.3 % (+10.0 % as a log), which is no regression."""
    size = abs(worse_by_pct) if size_pct is None else size_pct
    decided = decides_threshold(noise_pct, threshold_pct, size)
    beyond_noise = noise_pct is None or abs(worse_by_pct) > noise_pct
    if worse_by_pct > threshold_pct:
        return "regression" if beyond_noise and decided else "inconclusive"
    if -worse_by_pct > threshold_pct and beyond_noise and decided:
        return "improvement"
    return "pass"


def threshold_verdict(change_pct: float, threshold_pct: float) -> Verdict:
    """A change judged on its threshold alone (a quantity with no noise estimate): beyond it
    upwards a regression, downwards an improvement, else a pass."""
    if change_pct > threshold_pct:
        return Verdict.REGRESSION
    if -change_pct > threshold_pct:
        return Verdict.IMPROVEMENT
    return Verdict.PASS


def ratio_size_pct(change_pct: float) -> float:
    """A change of a ratio, as large as its log: the rise with the same log as a drop (−92 %
    is a 12.5x change, the size of +1150 %). The noise of a ratio is a half-width on the log
    scale (stats.compare_processes), read as a rise; a drop can never exceed 100 %, so held
    against twice that noise in percent a 12.5x slowdown read "too noisy" at ±85 %."""
    return math.expm1(abs(math.log1p(change_pct / 100))) * 100


# -- the missing rule -------------------------------------------------------------------------


class Side(str, Enum):
    """Which side of the comparison a fact is about."""

    BASELINE = "baseline"
    RUN = "run"


class Defect(str, Enum):
    """What makes a measured value unfit to judge."""

    ABSENT = "absent"
    NOT_FINITE = "not_finite"
    NOT_POSITIVE = "not_positive"


@dataclass(frozen=True)
class RefusedDiagnostics:
    """The child's diagnostics named keys already measured, and were refused them (a
    variant's `refused_diagnostics`): what the run says of a diagnostic it lacks when its
    child gave no reason of its own."""

    keys: tuple[str, ...]


@dataclass(frozen=True)
class DiagnosticsFailed:
    """The child's diagnostics pass raised (a variant's `diagnostics_error`: its exception):
    what the run says of a diagnostic it lacks."""

    error: str


@dataclass(frozen=True)
class MissingFacts(RowFactsBase):
    """A gated metric that cannot be judged: which side lacks it and how. `value` is the
    unfit value as the document had it (repr), `cause` what the run said about it (a failed
    diagnostics pass, in the child's words; or its refused diagnostics), when it said
    anything."""

    kind: ClassVar[str] = "missing"
    side: Side
    defect: Defect
    value: str | None = None
    cause: str | DiagnosticsFailed | RefusedDiagnostics | None = None


def diagnostics_doubt(variant: Variant) -> str | DiagnosticsFailed | RefusedDiagnostics | None:
    """What a variant says of its diagnostics pass: that it failed (`diagnostics_error`; in
    a document from before it was recorded, the child's first reason in `degraded` that names
    the diagnostics), else the keys refused from them; None: nothing."""
    if variant.diagnostics_error is not None:
        return DiagnosticsFailed(variant.diagnostics_error)
    # The old documents' reader: since issue 53's last items no child writes `degraded` (a
    # failed pass is `diagnostics_error`), so only a document from before reaches this.
    failures = [reason for reason in variant.degraded or () if "diagnostics" in reason]
    if failures:
        return failures[0]
    refused = variant.refused_diagnostics
    return RefusedDiagnostics(tuple(refused)) if refused else None


def missing(
    subject: Subject,
    metric: str,
    base: Any,
    cur: Any,
    *,
    numeric: bool = True,
    positive: bool = False,
) -> MetricVerdict | None:
    """A gated metric that cannot be judged is `missing`: absent on one side, or (`numeric`)
    not a finite number. None when it can be judged, or when neither run measured it."""
    if base is None and cur is None:
        return None
    cur_defect, base_defect = _defect(cur, numeric, False), _defect(base, numeric, positive)
    if cur_defect is Defect.ABSENT:
        facts = MissingFacts(Side.RUN, Defect.ABSENT)
    elif base_defect is Defect.ABSENT:
        facts = MissingFacts(Side.BASELINE, Defect.ABSENT)
    elif cur_defect is not None:
        facts = MissingFacts(Side.RUN, cur_defect, repr(cur))
    elif base_defect is not None:
        facts = MissingFacts(Side.BASELINE, base_defect, repr(base))
    else:
        return None
    values = [v if is_number(v) else None for v in (base, cur)]
    return subject.row(metric, Verdict.MISSING, baseline=values[0], current=values[1], facts=facts)


def _defect(value: Any, numeric: bool, positive: bool) -> Defect | None:
    if value is None:
        return Defect.ABSENT
    if numeric and not is_number(value):
        return Defect.NOT_FINITE
    if numeric and positive and value <= 0:
        return Defect.NOT_POSITIVE
    return None


# -- small helpers ----------------------------------------------------------------------------


def largest(*values: Any) -> float | None:
    known = [float(v) for v in values if is_number(v)]
    return max(known) if known else None


def is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
