"""What comparing a result with its baseline concluded, row by row and overall.

One `MetricVerdict` per step × variant × metric, with one of these verdicts:

    regression    worse by more than the threshold *and* than the noise of both runs
    improvement   better by more than the threshold and than the noise of both runs
    inconclusive  beyond the threshold but inside the noise: the runs cannot tell
    pass          within the threshold (or a possible improvement still inside the noise)
    new           nothing to compare with: not in the baseline, or failed there
    removed       in the baseline, not in this result (e.g. a step not selected this time)
    incomparable  not compared, and why: another GPU model or device type, a changed step
                  configuration, or a metric this run did not measure
    error         the step or variant failed in this run

The overall verdict is the first of these that applies, with its exit code:

    regression    1   at least one regression (errors elsewhere are listed too)
    error         3   a step or variant failed in this run, and nothing regressed
    inconclusive  0   shown in the headline, never fails the job: rerun with more
                      iterations to decide; failing would make noise block merges
    incomparable  0   shown in the headline; failing would block every pull request until
                      the baseline is re-recorded on the new runner, which needs a merge
    improvement   0
    new           0   every row is new (a first run against an empty baseline)
    pass          0   otherwise (removed rows alone never fail)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional, Union

from ..errors import EXIT_OK, EXIT_REGRESSION, EXIT_RUN_ERROR

VERDICTS = (
    "regression",
    "error",
    "inconclusive",
    "incomparable",
    "improvement",
    "new",
    "removed",
    "pass",
)
# Table order: what needs attention first.
SEVERITY_ORDER = (
    "regression",
    "error",
    "inconclusive",
    "improvement",
    "incomparable",
    "new",
    "removed",
    "pass",
)
VERDICT_EXIT_CODES = {"regression": EXIT_REGRESSION, "error": EXIT_RUN_ERROR}

# A value in a verdict row: a number in the row's unit, a status string, or nothing.
Value = Optional[Union[float, int, str]]


@dataclass(frozen=True)
class EnvironmentSummary:
    """Where one side of the comparison was measured (for the headline and the JSON)."""

    torch: str | None = None
    device: str | None = None
    gpu_name: str | None = None
    created_at: str | None = None
    commit: str | None = None

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> EnvironmentSummary:
        env = document.get("environment") or {}
        return cls(
            torch=env.get("torch"),
            device=env.get("device"),
            gpu_name=env.get("gpu_name"),
            created_at=document.get("created_at"),
            commit=env.get("commit"),
        )

    def hardware(self) -> str:
        """`NVIDIA H200 (cuda)`, `cpu` or `unknown device`."""
        if self.gpu_name:
            return f"{self.gpu_name} ({self.device or 'unknown device'})"
        return self.device or "unknown device"


@dataclass(frozen=True)
class MetricVerdict:
    """One compared metric of one step (and variant), with everything it was judged on.

    `variant` is None for rows about a whole step; "eager" for the eager step time.
    `unit` is the unit of `baseline`/`current` ("x", "ms", "s", "bytes", "count", "status");
    `change_unit` is "pct" or "count"; `threshold` is in `change_unit`. `noise_pct` is the
    combined noise of both runs the change was judged against (speed metrics only), and
    `detectable_change_pct` the smallest change this comparison could call a regression.
    `normalisation` says how step times were compared: "yardstick" (in units of the machine
    yardstick timed beside them) or "raw" (milliseconds; e.g. across torch versions).
    """

    step: str
    variant: str | None
    metric: str
    verdict: str
    message: str
    direction: str | None = None
    unit: str | None = None
    baseline: Value = None
    current: Value = None
    change: float | None = None
    change_unit: str | None = None
    threshold: float | None = None
    noise_pct: float | None = None
    detectable_change_pct: float | None = None
    normalisation: str | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class VerdictReport:
    """All verdict rows of one comparison, the two environments, and notes for the reader."""

    verdicts: tuple[MetricVerdict, ...]
    baseline: EnvironmentSummary
    current: EnvironmentSummary
    notes: tuple[str, ...] = ()

    @property
    def overall(self) -> str:
        counts = self.counts()
        for verdict in ("regression", "error", "inconclusive", "incomparable", "improvement"):
            if counts[verdict]:
                return verdict
        if self.verdicts and counts["new"] == len(self.verdicts):
            return "new"
        return "pass"

    @property
    def exit_code(self) -> int:
        return VERDICT_EXIT_CODES.get(self.overall, EXIT_OK)

    def counts(self) -> dict[str, int]:
        """Rows per verdict, every verdict present (zero when none)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.verdicts:
            counts[row.verdict] += 1
        return counts

    def rows(self, verdict: str | None = None, metric: str | None = None) -> list[MetricVerdict]:
        """The rows with this verdict and/or metric (all rows when neither is given)."""
        return [
            row
            for row in self.verdicts
            if (verdict is None or row.verdict == verdict)
            and (metric is None or row.metric == metric)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "overall": self.overall,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "notes": list(self.notes),
            "baseline": dataclasses.asdict(self.baseline),
            "current": dataclasses.asdict(self.current),
            "verdicts": [row.to_dict() for row in self.verdicts],
        }


def sorted_by_severity(rows: Iterable[MetricVerdict]) -> list[MetricVerdict]:
    """Regressions first, then errors, inconclusive, improvements, the rest; stable otherwise."""
    order = {verdict: index for index, verdict in enumerate(SEVERITY_ORDER)}
    return sorted(rows, key=lambda row: order[row.verdict])


def format_value(value: Value, unit: str | None) -> str:
    """A row value for people: `1.27x`, `12.50 ms`, `14.3 s`, `1.2 GiB`, `3`, `pass`, `-`."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "ms":
        return f"{value:.3g} ms" if value < 1 else f"{value:.2f} ms"
    if unit == "s":
        return f"{value:.1f} s"
    if unit == "bytes":
        return format_bytes(value)
    if unit == "count":
        return f"{value:.0f}"
    return f"{value:g}"


def format_bytes(value: float) -> str:
    size = float(value)
    for suffix in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or suffix == "GiB":
            return f"{size:.0f} {suffix}" if suffix == "B" else f"{size:.1f} {suffix}"
        size /= 1024
    raise AssertionError("unreachable")


def format_change(change: float | None, change_unit: str | None) -> str:
    """`+7.2 %`, `-3.0 %`, `+2`, or `-`."""
    if change is None:
        return "-"
    if change_unit == "pct":
        return f"{change:+.1f} %"
    return f"{change:+.0f}"


def format_threshold(threshold: float | None, change_unit: str | None) -> str:
    """`5 %` for a percentage, `> 0` for an allowed count increase, or `-`."""
    if threshold is None:
        return "-"
    if change_unit == "pct":
        return f"{threshold:g} %"
    return f"> {threshold:g}"


def format_noise(noise_pct: float | None) -> str:
    return "-" if noise_pct is None else f"±{noise_pct:.1f} %"
