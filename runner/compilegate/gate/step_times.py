"""Eager step time, compiled step time and speedup across runs: which processes are compared,
in which units, and against what noise.

Each run times the step in several processes (results/processes.py): eager references, and
every variant's own processes. A metric's value per process is its fastest iteration
(stats.fastest; a speedup is eager / compiled of the same process), and the two runs are
compared with a two-sample t interval over their processes (stats.compare_processes):
the change of the geometric mean, judged by the noise rule (metric_rules) against the
95 % half-width from both runs' pooled spread. A process's own luck and what the machine
did while it ran are in that spread; the baseline's processes add degrees of freedom.

Units (`normalisation` in the verdict row):

    yardstick   step times divided by the fastest yardstick iteration of the same process
                (child/timing.yardstick): a runner that is slower today moves both
    raw         milliseconds; when the runs used different torch versions, since the
                yardstick is a torch workload and would change with the version under
                test, or when a run did not time the yardstick

A speedup is a ratio inside one process and needs no yardstick. Runs without process
records (results written before them), or with one process on each side (no degrees of
freedom), are judged on medians and the noise estimates of metric_rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..results.processes import (
    all_timed_yardstick,
    compiled_values,
    eager_records,
    eager_values,
    geometric_mean,
    speedup_values,
    variant_records,
)
from ..results.stats import ProcessComparison, compare_processes
from .metric_rules import (
    HIGHER_IS_BETTER,
    SPEED_METRICS,
    Subject,
    classify_speed_change,
    compiled_noise_pct,
    eager_noise_pct,
    get_path,
    judge_speed,
    speedup_noise_pct,
    yardstick_noise_pct,
)
from .verdict import MetricVerdict, format_value

Doc = Mapping[str, Any]
YARDSTICK = "yardstick"
RAW = "raw"
YARDSTICK_UNIT = "yardsticks"  # a step time divided by the yardstick's: no physical unit


@dataclass(frozen=True)
class SpeedComparison:
    """How two runs' speeds are compared: in yardstick units or raw, and why raw."""

    normalisation: str = YARDSTICK
    why_raw: str = ""

    @classmethod
    def between(cls, baseline_doc: Doc, result_doc: Doc) -> SpeedComparison:
        base = (baseline_doc.get("environment") or {}).get("torch")
        cur = (result_doc.get("environment") or {}).get("torch")
        if base and cur and base != cur:
            return cls(
                RAW,
                f"torch {base} → {cur}: the yardstick runs on torch, so it is not a fixed "
                "unit across versions",
            )
        return cls()

    def eager(
        self, subject: Subject, steps: tuple[Doc, Doc], threshold_pct: float
    ) -> MetricVerdict | None:
        base, cur = steps
        records = (eager_records(base), eager_records(cur))
        if _has_degrees_of_freedom(records):
            normalisation, units = self._units(records)
            per_yardstick = normalisation == YARDSTICK
            return self._judge(
                subject,
                "eager_step_ms",
                [eager_values(r, per_yardstick=per_yardstick) for r in records],
                [eager_values(r, per_yardstick=False) for r in records],
                threshold_pct,
                (normalisation, units),
            )
        return self._from_medians(
            subject,
            "eager_step_ms",
            (base.get("eager") or {}, cur.get("eager") or {}),
            steps,
            ("step_ms", "per_yardstick", "noise_pct"),
            threshold_pct,
            (eager_noise_pct(base), eager_noise_pct(cur)),
        )

    def compiled(
        self,
        subject: Subject,
        variants: tuple[Doc, Doc],
        steps: tuple[Doc, Doc],
        threshold_pct: float,
    ) -> MetricVerdict | None:
        records = (variant_records(variants[0]), variant_records(variants[1]))
        if _has_degrees_of_freedom(records):
            normalisation, units = self._units(records)
            per_yardstick = normalisation == YARDSTICK
            return self._judge(
                subject,
                "compiled_step_ms",
                [compiled_values(r, per_yardstick=per_yardstick) for r in records],
                [compiled_values(r, per_yardstick=False) for r in records],
                threshold_pct,
                (normalisation, units),
            )
        return self._from_medians(
            subject,
            "compiled_step_ms",
            variants,
            steps,
            ("step_ms", "compiled_per_yardstick", "noise_pct"),
            threshold_pct,
            (compiled_noise_pct(variants[0], steps[0]), compiled_noise_pct(variants[1], steps[1])),
        )

    def speedup(
        self, subject: Subject, variants: tuple[Doc, Doc], threshold_pct: float
    ) -> MetricVerdict | None:
        records = (variant_records(variants[0]), variant_records(variants[1]))
        if _has_degrees_of_freedom(records):
            values = [speedup_values(r) for r in records]
            return self._judge(subject, "speedup", values, values, threshold_pct, (None, ""))
        return judge_speed(
            subject,
            "speedup",
            get_path(variants[0], "speedup", "median"),
            get_path(variants[1], "speedup", "median"),
            threshold_pct,
            (speedup_noise_pct(variants[0]), speedup_noise_pct(variants[1])),
        )

    # -- helpers --------------------------------------------------------------------------

    def _units(self, records: tuple[list[Doc], list[Doc]]) -> tuple[str, str]:
        """(the normalisation, how the message says it)."""
        if self.normalisation == RAW:
            return RAW, f"raw milliseconds ({self.why_raw})"
        if not all(all_timed_yardstick(r) for r in records):
            return RAW, "raw milliseconds (a run did not time the yardstick)"
        return YARDSTICK, "in units of the yardstick timed beside them"

    def _judge(
        self,
        subject: Subject,
        metric: str,
        judged: Sequence[Sequence[float]],
        shown: Sequence[Sequence[float]],
        threshold_pct: float,
        units: tuple[str | None, str],
    ) -> MetricVerdict:
        """One row from both runs' per-process values: `judged` in the units compared,
        `shown` in the row's own unit (ms, or x for a speedup)."""
        label, unit, direction = SPEED_METRICS[metric]
        comparison = compare_processes(judged[0], judged[1])
        raw = compare_processes(shown[0], shown[1])
        change = comparison.change_pct
        worse_by = -change if direction == HIGHER_IS_BETTER else change
        noise = comparison.noise_pct
        assert noise is not None  # _has_degrees_of_freedom
        verdict = classify_speed_change(worse_by, threshold_pct, noise)
        normalisation, units_text = units
        shown_values = (geometric_mean(shown[0]), geometric_mean(shown[1]))
        unit_text = f", {units_text}" if units_text else ""
        if normalisation == YARDSTICK:
            # The row's values, change and threshold are all in yardstick units; the
            # milliseconds they came from are in the message.
            values = (geometric_mean(judged[0]), geometric_mean(judged[1]))
            unit = YARDSTICK_UNIT
            unit_text += (
                f"; raw {format_value(shown_values[0], 'ms')} → "
                f"{format_value(shown_values[1], 'ms')}, {raw.change_pct:+.1f} %"
            )
        else:
            values = shown_values
        moved = (
            f"{label} {format_value(values[0], unit)} → {format_value(values[1], unit)} "
            f"({change:+.1f} %; {_what(comparison)}{unit_text})"
        )
        message = _message(moved, verdict, change, threshold_pct, noise)
        return subject.measured(
            metric,
            verdict,
            message,
            values,
            unit,
            change,
            threshold_pct,
            direction=direction,
            noise_pct=noise,
            detectable_change_pct=max(threshold_pct, noise),
            normalisation=normalisation,
        )

    def _from_medians(
        self,
        subject: Subject,
        metric: str,
        docs: tuple[Doc, Doc],
        steps: tuple[Doc, Doc],
        keys: tuple[str, str, str],
        threshold_pct: float,
        raw_noise_pct: tuple[float | None, float | None],
    ) -> MetricVerdict | None:
        """Runs without process records: medians, in yardstick units when both timed it on
        the same torch, with the run-to-run drift each run could see counted as noise."""
        timing_key, ratio_key, aa_key = keys
        base, cur = docs
        values = (get_path(base, timing_key, "median"), get_path(cur, timing_key, "median"))
        ratios = (base.get(ratio_key), cur.get(ratio_key))
        if self.normalisation == YARDSTICK and ratios[0] and ratios[1]:
            noise = (
                yardstick_noise_pct(ratios[0], base.get(aa_key), steps[0].get("process_noise_pct")),
                yardstick_noise_pct(ratios[1], cur.get(aa_key), steps[1].get("process_noise_pct")),
            )
            per_yardstick = (ratios[0]["median"], ratios[1]["median"])
            row = judge_speed(
                subject, metric, *values, threshold_pct, noise, per_yardstick=per_yardstick
            )
            return row and dataclasses.replace(row, normalisation=YARDSTICK)
        row = judge_speed(subject, metric, *values, threshold_pct, raw_noise_pct)
        if row is None or row.verdict not in SPEED_VERDICTS:
            return row
        why = f" (raw milliseconds: {self.why_raw})" if self.why_raw else ""
        return dataclasses.replace(row, normalisation=RAW, message=row.message + why)


SPEED_VERDICTS = ("regression", "improvement", "inconclusive", "pass")


def _has_degrees_of_freedom(records: tuple[list[Doc], list[Doc]]) -> bool:
    return bool(records[0]) and bool(records[1]) and len(records[0]) + len(records[1]) > 2


def _what(comparison: ProcessComparison) -> str:
    n_base, n_cur = comparison.processes
    return f"fastest iterations, {n_base} processes → {n_cur}"


def _message(moved: str, verdict: str, change: float, threshold_pct: float, noise: float) -> str:
    limit = f"the {threshold_pct:g} % threshold"
    beyond = f"{limit} and the ±{noise:.1f} % noise between the processes of both runs"
    if verdict == "regression":
        return f"{moved}: worse by more than {beyond}"
    if verdict == "improvement":
        return f"{moved}: better by more than {beyond}"
    if verdict == "inconclusive":
        return (
            f"{moved}: beyond {limit} but inside the ±{noise:.1f} % noise between the "
            f"processes of both runs, which can only detect changes above {noise:.1f} %; "
            "rerun with more processes (variant_processes) or iterations to decide"
        )
    if abs(change) > threshold_pct:
        return f"{moved}: better, but inside the ±{noise:.1f} % noise: not a clear improvement"
    return f"{moved}: within {limit} (noise ±{noise:.1f} %)"
