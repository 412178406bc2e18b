"""The verdict of one metric of one step or variant: directions, thresholds and the noise rule.

    metric              direction          threshold (config.DEFAULT_THRESHOLDS)   judged on
    speedup             higher is better   speedup_drop_pct                 threshold and noise
    eager_step_ms       lower is better    eager_step_time_growth_pct       threshold and noise
    compiled_step_ms    lower is better    compiled_step_time_growth_pct    threshold and noise
    compile_s           lower is better    compile_time_growth_pct          threshold, 1 s floor
    recompiles          fewer is better    recompiles_increase              allowed increase
    graph_break_sites   fewer is better    graph_break_sites_increase       new sites, named
    fallbacks_to_eager  fewer is better    fallbacks_increase               allowed increase
    numerics            must pass          pass → fail                      status
    peak_bytes          lower is better    peak_memory_growth_pct           threshold

Noise rule for the three speed metrics. When both runs timed the step in several processes,
gate/step_times.py compares their fastest iterations, and the noise is the 95 % half-width
of a two-sample t interval pooling both runs' processes; classify_speed_change below then
decides. Results without process records are judged here, on medians: each run states its
own noise as a 95 % half-width in percent; for one run and metric it is the largest of the
estimates the run offers:

    speedup           the speedup CI half-width, noise_pct (A/A), detectable_change_pct
    compiled time     noise_pct, detectable_change_pct, half-range of its round medians
    eager time        eager.noise_pct, half-range of its round medians (else the
                      variants' noise_pct)

The round-median spread is there because an absolute time has no interleaved partner to
cancel drift against (the A/A ratio and the speedup have one): a host that drifts ±8 %
from round to round drifts as much from one run to the next. The two runs are
independent, so the noise of the comparison is the root sum of squares:

    noise = sqrt(noise_baseline² + noise_current²)
    worse  by > threshold and > noise      → regression
    worse  by > threshold but ≤ noise      → inconclusive, stating the smallest change
                                             these two runs can detect (= noise)
    better by > threshold and > noise      → improvement
    otherwise                              → pass (a gain inside the noise says so)

"Beyond the threshold" makes a change matter, "beyond the noise" makes it real; a
regression needs both. A run without any noise estimate (an old result) contributes
nothing; when neither has one the change is judged on the threshold alone and the message
says so. Compile time, memory and the counts are not timed in rounds and are judged on
their thresholds; compile-time changes under COMPILE_TIME_FLOOR_S are ignored so that tiny
compiles do not flap (a baseline under the floor counts as the floor for the percentage).

A gated metric that cannot be judged — measured on one side only, or not a finite number
(NaN compares false with everything, so it would read as a pass) — is `missing`, which
fails the job; a metric neither run measured (peak memory on CPU) has no row.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .verdict import MetricVerdict, format_value

COMPILE_TIME_FLOOR_S = 1.0
HIGHER_IS_BETTER = "higher_is_better"
LOWER_IS_BETTER = "lower_is_better"
MUST_PASS = "must_pass"
# metric -> (label, unit, direction)
SPEED_METRICS = {
    "speedup": ("speedup", "x", HIGHER_IS_BETTER),
    "eager_step_ms": ("eager step time", "ms", LOWER_IS_BETTER),
    "compiled_step_ms": ("compiled step time", "ms", LOWER_IS_BETTER),
}

Doc = Mapping[str, Any]


@dataclass(frozen=True)
class Subject:
    """What a row is about: a step, and a variant of it ("eager", or None for the whole step)."""

    step: str
    variant: str | None = None

    def row(self, metric: str, verdict: str, message: str, **fields: Any) -> MetricVerdict:
        return MetricVerdict(self.step, self.variant, metric, verdict, message, **fields)

    def measured(
        self,
        metric: str,
        verdict: str,
        message: str,
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
            message,
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


def classify_speed_change(
    worse_by_pct: float, threshold_pct: float, noise_pct: float | None
) -> str:
    """The noise rule; `worse_by_pct` is the change in the bad direction (negative: better)."""
    if worse_by_pct > threshold_pct:
        return "regression" if noise_pct is None or worse_by_pct > noise_pct else "inconclusive"
    if -worse_by_pct > threshold_pct and (noise_pct is None or -worse_by_pct > noise_pct):
        return "improvement"
    return "pass"


def ratio_half_width_pct(ratio: Doc | None) -> float | None:
    """Half-width of a ratio's CI in percent of its median (the wider side).

    None for a zero-width interval: that is what a single round gives (stats.py), not a
    measurement of zero noise.
    """
    if not ratio or not ratio.get("median") or ratio["ci_low"] == ratio["ci_high"]:
        return None
    median = ratio["median"]
    return max(median - ratio["ci_low"], ratio["ci_high"] - median) / median * 100


def round_spread_pct(timing: Doc | None) -> float | None:
    """Half-range of the per-round medians in percent of the overall median (≥2 rounds)."""
    if not timing or not timing.get("rounds") or not timing.get("median"):
        return None
    by_round: dict[int, list[float]] = {}
    for value, round_no in zip(timing["samples"], timing["rounds"]):
        by_round.setdefault(round_no, []).append(value)
    if len(by_round) < 2:
        return None
    medians = [statistics.median(values) for values in by_round.values()]
    spread = (max(medians) - min(medians)) / 2 / timing["median"] * 100
    return spread or None  # identical rounds: nothing measured, not zero noise


def yardstick_noise_pct(
    ratio: Doc | None, aa_noise_pct: float | None, process_noise: float | None
) -> float | None:
    """Noise of a step time in yardstick units: its interval, the A/A noise, or the spread
    between the run's processes, whichever is largest."""
    return largest(ratio_half_width_pct(ratio), aa_noise_pct, process_noise)


def speedup_noise_pct(variant: Doc) -> float | None:
    return largest(
        ratio_half_width_pct(variant.get("speedup")),
        variant.get("noise_pct"),
        variant.get("detectable_change_pct"),
    )


def compiled_noise_pct(variant: Doc, step: Doc | None = None) -> float | None:
    """An absolute time has no interleaved partner across runs: besides the run's own noise,
    count how far one process's timing lands from another's (process_noise_pct)."""
    return largest(
        variant.get("noise_pct"),
        variant.get("detectable_change_pct"),
        round_spread_pct(variant.get("step_ms")),
        (step or {}).get("process_noise_pct"),
    )


def eager_noise_pct(step: Doc) -> float | None:
    eager = step.get("eager") or {}
    own = largest(
        eager.get("noise_pct"),
        round_spread_pct(eager.get("step_ms")),
        step.get("process_noise_pct"),
    )
    if own is not None:
        return own
    return largest(*(v.get("noise_pct") for v in step.get("variants", [])))


# -- one metric, one row ----------------------------------------------------------------------


def judge_speed(
    subject: Subject,
    metric: str,
    base_value: float | None,
    cur_value: float | None,
    threshold_pct: float,
    noise_pct: tuple[float | None, float | None],
    *,
    per_yardstick: tuple[float, float] | None = None,
) -> MetricVerdict | None:
    """A speed metric (see SPEED_METRICS) under the noise rule; noise_pct is (baseline, current).

    With `per_yardstick` (the step time in units of the machine yardstick, baseline and
    current), the change is judged on those, so a machine that runs slower today does not
    read as a slower step; the raw times are still shown.
    """
    label, unit, direction = SPEED_METRICS[metric]
    unjudged = _missing(subject, metric, label, base_value, cur_value, positive=True)
    if unjudged is not None or base_value is None or cur_value is None:
        return unjudged
    change_pct = (cur_value - base_value) / base_value * 100
    adjusted = ""
    if per_yardstick is not None:
        raw_change_pct = change_pct
        change_pct = (per_yardstick[1] - per_yardstick[0]) / per_yardstick[0] * 100
        adjusted = (
            f"; {change_pct:+.1f} % against the machine yardstick timed beside it "
            f"(raw {raw_change_pct:+.1f} %)"
        )
    worse_by = -change_pct if direction == HIGHER_IS_BETTER else change_pct
    noise = combined_noise_pct(*noise_pct)
    verdict = classify_speed_change(worse_by, threshold_pct, noise)
    moved = _moved(label, base_value, cur_value, unit, change_pct) + adjusted
    limit = f"the {threshold_pct:g} % threshold"
    if noise is None:
        beyond, caveat = limit, " (no noise measured in either run: judged on the threshold alone)"
    else:
        beyond = f"{limit} and the ±{noise:.1f} % noise of both runs"
        unmeasured = [side for side, n in zip(("the baseline", "this run"), noise_pct) if n is None]
        caveat = f" (no noise measured in {unmeasured[0]})" if unmeasured else ""
    if verdict == "regression":
        message = f"{moved}: worse by more than {beyond}{caveat}"
    elif verdict == "improvement":
        message = f"{moved}: better by more than {beyond}{caveat}"
    elif verdict == "inconclusive":
        message = (
            f"{moved}: beyond {limit} but inside the ±{noise:.1f} % noise of both runs, which "
            f"can only detect changes above {noise:.1f} %; rerun with more iterations or "
            f"rounds to decide{caveat}"
        )
    elif abs(change_pct) > threshold_pct:
        message = f"{moved}: better, but inside the ±{noise:.1f} % noise: not a clear improvement"
    else:
        message = f"{moved}: within {limit}"
    detectable = threshold_pct if noise is None else max(threshold_pct, noise)
    values = (base_value, cur_value)
    return subject.measured(
        metric,
        verdict,
        message,
        values,
        unit,
        change_pct,
        threshold_pct,
        direction=direction,
        noise_pct=noise,
        detectable_change_pct=detectable,
    )


def judge_compile_time(
    subject: Subject, base_s: float | None, cur_s: float | None, threshold_pct: float
) -> MetricVerdict | None:
    unjudged = _missing(subject, "compile_s", "compile time", base_s, cur_s)
    if unjudged is not None or base_s is None or cur_s is None:
        return unjudged
    growth_s = cur_s - base_s
    change_pct = growth_s / max(base_s, COMPILE_TIME_FLOOR_S) * 100
    moved = f"compile time {base_s:.1f} s → {cur_s:.1f} s ({growth_s:+.1f} s, {change_pct:+.1f} %)"
    if abs(growth_s) < COMPILE_TIME_FLOOR_S:
        verdict, why = "pass", f"changes under {COMPILE_TIME_FLOOR_S:g} s are ignored"
    else:
        verdict, why = _threshold_verdict(change_pct, threshold_pct)
    return subject.measured(
        "compile_s", verdict, f"{moved}: {why}", (base_s, cur_s), "s", change_pct, threshold_pct
    )


def judge_peak_memory(
    subject: Subject, base_bytes: int | None, cur_bytes: int | None, threshold_pct: float
) -> MetricVerdict | None:
    unjudged = _missing(subject, "peak_bytes", "peak memory", base_bytes, cur_bytes, positive=True)
    if unjudged is not None or base_bytes is None or cur_bytes is None:
        return unjudged
    change_pct = (cur_bytes - base_bytes) / base_bytes * 100
    verdict, why = _threshold_verdict(change_pct, threshold_pct)
    moved = _moved("peak memory", base_bytes, cur_bytes, "bytes", change_pct)
    values = (base_bytes, cur_bytes)
    return subject.measured(
        "peak_bytes", verdict, f"{moved}: {why}", values, "bytes", change_pct, threshold_pct
    )


def judge_count(
    subject: Subject,
    metric: str,
    label: str,
    base: int | None,
    cur: int | None,
    allowed_increase: float,
    detail: str = "",
) -> MetricVerdict | None:
    """A count where more is worse (recompiles, fallbacks to eager)."""
    unjudged = _missing(subject, metric, label, base, cur)
    if unjudged is not None or base is None or cur is None:
        return unjudged
    increase = cur - base
    moved = f"{label} {base} → {cur}"
    if increase > allowed_increase:
        verdict, message = "regression", f"{moved} (allowed increase: {allowed_increase:g}){detail}"
    elif increase < 0:
        verdict, message = "improvement", f"{moved}: fewer than in the baseline"
    elif increase > 0:
        verdict, message = "pass", f"{moved}: within the allowed increase of {allowed_increase:g}"
    else:
        verdict, message = "pass", f"{moved}: unchanged"
    return subject.measured(
        metric, verdict, message, (base, cur), "count", float(increase), allowed_increase
    )


def judge_graph_breaks(
    subject: Subject, base_gb: Doc | None, cur_gb: Doc | None, allowed_new: float
) -> MetricVerdict | None:
    """New sites (by file and line) are named; a site that only moved lines is not new.

    Breaks in the user's code and in installed libraries are judged; torch's own internal
    breaks (origin "torch", e.g. the optimizer's graph_break()) are listed, not gated.
    """
    unjudged = _missing(
        subject, "graph_break_sites", "graph breaks", base_gb, cur_gb, numeric=False
    )
    if unjudged is not None or base_gb is None or cur_gb is None:
        return unjudged
    base_sites = gated_sites(base_gb.get("sites", []))
    cur_sites = gated_sites(cur_gb.get("sites", []))
    new, gone = diff_graph_break_sites(base_sites, cur_sites)
    if new:
        verdict = "regression" if len(new) > allowed_new else "pass"
        message = f"new graph break at {break_name(new[0])}: {new[0]['reason']}"
        if len(new) > 1:
            message += f"; and {len(new) - 1} more: " + ", ".join(map(site_name, new[1:4]))
        if verdict == "pass":
            message += f" (within the allowed {allowed_new:g} new sites)"
        change = float(len(new))
    elif gone:
        verdict, change = "improvement", float(-len(gone))
        message = "graph break gone: " + ", ".join(
            f"{site_name(s)} ({s['reason']})" for s in gone[:3]
        )
    else:
        verdict, change = "pass", 0.0
        message = f"no new graph-break sites ({len(cur_sites)} as before)"
    values = (len(base_sites), len(cur_sites))
    return subject.measured(
        "graph_break_sites", verdict, message, values, "count", change, allowed_new
    )


def judge_numerics(
    subject: Subject, base: Doc | None, cur: Doc | None, *, required: bool = False
) -> MetricVerdict | None:
    """pass → fail is a regression. A side without a pass/fail verdict (numerics errored,
    were skipped or are absent) while the other has one, or while the baseline's policy
    checks numerics (`required`), is `missing`: an unchecked compile is not a pass."""
    checked = ("pass", "fail")
    base_status, cur_status = (base or {}).get("status"), (cur or {}).get("status")
    if base_status not in checked and cur_status not in checked and not required:
        return None
    detail = _numerics_detail(cur or {})
    if cur_status not in checked:
        verdict, message = (
            "missing",
            f"numerics not checked in this run ({cur_status or 'no verdict'}{detail})",
        )
    elif base_status not in checked:
        verdict, message = (
            "missing",
            f"numerics {cur_status} in this run, but the baseline has no numerics verdict "
            f"({base_status or 'none'}{_numerics_detail(base or {})}): nothing to judge it against",
        )
    elif (base_status, cur_status) == ("pass", "fail"):
        verdict, message = "regression", f"numerics pass → fail{detail}"
    elif (base_status, cur_status) == ("fail", "pass"):
        verdict, message = "improvement", "numerics fail → pass"
    elif cur_status == "fail":
        verdict, message = "pass", f"numerics still fail, as in the baseline{detail}"
    else:
        verdict, message = "pass", "numerics pass, as in the baseline"
    return subject.row(
        "numerics",
        verdict,
        message,
        direction=MUST_PASS,
        unit="status",
        baseline=base_status,
        current=cur_status,
    )


def diff_graph_break_sites(
    base_sites: Iterable[Doc], cur_sites: Iterable[Doc]
) -> tuple[list[Doc], list[Doc]]:
    """(new sites, gone sites), keyed by (file, line), and by the cause's (file, line) too when
    both sides record causes (two breaks can split a graph at the same call).

    A break that moved (same file and reason, gone from one line, new at another) is the same
    break: an edit above it must not be reported as a new graph break.
    """
    base_sites, cur_sites = list(base_sites), list(cur_sites)
    with_cause = all("cause" in s for s in [*base_sites, *cur_sites])
    base_unique = _unique_sites(base_sites, with_cause)
    cur_unique = _unique_sites(cur_sites, with_cause)
    new = [s for key, s in cur_unique.items() if key not in base_unique]
    gone = [s for key, s in base_unique.items() if key not in cur_unique]
    really_new = []
    for site in new:
        same = (site["file"], site["reason"])
        moved = next((g for g in gone if (g["file"], g["reason"]) == same), None)
        if moved is None:
            really_new.append(site)
        else:
            gone.remove(moved)
    return really_new, gone


def recompile_detail(base: Doc, cur: Doc) -> str:
    """The first recompile this run has and the baseline had not, and a newly hit limit."""
    base_rc, cur_rc = base.get("recompiles") or {}, cur.get("recompiles") or {}
    known = {_event_key(e) for e in base_rc.get("events", [])}
    new = [e for e in cur_rc.get("events", []) if _event_key(e) not in known]
    detail = ""
    if new:
        event = new[0]
        detail = f"; new: {event['function']} at {site_name(event)}: {event['reason']}"
    if cur_rc.get("limit_hit") and not base_rc.get("limit_hit"):
        detail += "; the recompile limit was hit: that frame now runs eagerly"
    return detail


def gated_sites(sites: Iterable[Doc]) -> list[Doc]:
    """Sites in the user's code or an installed library (documents before `origin` was
    recorded: every site, as then)."""
    return [s for s in sites if s.get("origin", "repo") in ("repo", "library")]


def break_name(site: Doc) -> str:
    """`model.py:42`, with the cause when it is elsewhere: `model.py:42 (cause: util.py:7)`."""
    cause = site.get("cause") or {}
    if not cause or (cause.get("file"), cause.get("line")) == (site["file"], site.get("line")):
        return site_name(site)
    return f"{site_name(site)} (cause: {site_name(cause)})"


def site_name(site: Doc) -> str:
    """`model.py:42`, or the file alone when the line is unknown."""
    return f"{site['file']}:{site['line']}" if site.get("line") is not None else str(site["file"])


def largest(*values: Any) -> float | None:
    known = [float(v) for v in values if is_number(v)]
    return max(known) if known else None


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _threshold_verdict(change_pct: float, threshold_pct: float) -> tuple[str, str]:
    if change_pct > threshold_pct:
        return "regression", f"grew by more than the {threshold_pct:g} % threshold"
    if -change_pct > threshold_pct:
        return "improvement", f"fell by more than the {threshold_pct:g} % threshold"
    return "pass", f"within the {threshold_pct:g} % threshold"


def _moved(label: str, base: float, cur: float, unit: str, change_pct: float) -> str:
    return f"{label} {format_value(base, unit)} → {format_value(cur, unit)} ({change_pct:+.1f} %)"


def _missing(
    subject: Subject,
    metric: str,
    label: str,
    base: Any,
    cur: Any,
    *,
    numeric: bool = True,
    positive: bool = False,
) -> MetricVerdict | None:
    """A gated metric that cannot be judged is `missing`: absent on one side, or (`numeric`)
    not a finite number — a NaN compares false with everything and would read as a pass.
    None when it can be judged, or when neither run measured it (peak memory on CPU)."""
    if base is None and cur is None:
        return None
    cur_defect, base_defect = _defect(cur, numeric, False), _defect(base, numeric, positive)
    if cur_defect == "absent":
        message = f"{label}: not measured in this run"
    elif base_defect == "absent":
        message = f"{label}: not in the baseline, nothing to judge this run's against"
    elif cur_defect or base_defect:
        side = "this run" if cur_defect else "the baseline"
        message = (
            f"{label}: {cur_defect or base_defect} in {side} ({cur if cur_defect else base!r})"
        )
    else:
        return None
    values = [v if is_number(v) else None for v in (base, cur)]
    return subject.row(metric, "missing", message, baseline=values[0], current=values[1])


def _defect(value: Any, numeric: bool, positive: bool) -> str | None:
    if value is None:
        return "absent"
    if numeric and not is_number(value):
        return "not a finite number"
    if numeric and positive and value <= 0:
        return "not a positive number"
    return None


def _numerics_detail(numerics: Doc) -> str:
    failed = numerics.get("failed") or []
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return f": {', '.join(failed[:3])}{more}"
    return f": {numerics['reason']}" if numerics.get("reason") else ""


def _unique_sites(sites: Iterable[Doc], with_cause: bool) -> dict[tuple[Any, ...], Doc]:
    unique: dict[tuple[Any, ...], Doc] = {}
    for site in sites:
        key: tuple[Any, ...] = (site["file"], site["line"])
        if with_cause:
            key += (site["cause"].get("file"), site["cause"].get("line"))
        unique.setdefault(key, site)
    return unique


def _event_key(event: Doc) -> tuple[Any, ...]:
    return (event.get("function"), event.get("file"), event.get("line"), event.get("reason"))


def get_path(doc: Doc | None, *keys: str) -> Any:
    """`doc[k1][k2]…`, or None where a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(doc, Mapping):
            return None
        doc = doc.get(key)
    return doc
