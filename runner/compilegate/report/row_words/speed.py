"""The words of a speed row — speedup, eager and compiled step time and their quantiles —
from the facts the speed judges found (gate/judges/speed_facts.py).

    speed_said(row, facts)  the row's sentence, the milliseconds behind a yardstick-unit
                         row (raw_ms_as_said) and its pairs when too few (too_few_pairs.py)
    not_judged_why(row)  what follows "reported, not judged: " in it, for a step time that
                         may not fail the job here (None where it may)
    not_judged_reason    why that is, as a value
    raw_ms_as_said(row)  the milliseconds a yardstick-unit row came from, as it says them
"""

from __future__ import annotations

from ...gate.history import HISTORY_RUNS
from ...gate.judges.speed_facts import (
    HistoryFacts,
    NotJudged,
    RawBecause,
    SpeedFacts,
    Statistic,
    Ungated,
)
from ...gate.rules import Side, detectable_change_pct
from ...gate.verdict import MetricVerdict, Verdict
from ...results.formats import format_value
from ...results.processes import DISTURBED_TWINS_RATIO, GPU_BOUND, LAUNCH_BOUND
from .missing import LABELS
from .rules import noise_rule_words
from .sentence import RowSentence
from .too_few_pairs import too_few_pairs, too_few_words
from .worded import WordedRow

NOT_JUDGED = "reported, not judged: "
YARDSTICK_NAMES = {GPU_BOUND: "GPU-bound", LAUNCH_BOUND: "launch-bound"}
# How a row names what it compared of each process, and the label's suffix for it.
_STATISTICS = {
    Statistic.FASTEST: ("fastest iterations", ""),
    Statistic.P25: ("each process's 25th percentile", " (25th percentile)"),
}
_FAMILIES = ("speedup", "eager_step_ms", "compiled_step_ms")
_SIDE_OWNER = {Side.BASELINE: "baseline's", Side.RUN: "this run's"}
_SIDE_NAMES = {Side.BASELINE: "the baseline", Side.RUN: "this run"}
PAIRED_MODE = "or now in paired mode (run --against)"


def speed_facts(row: MetricVerdict) -> SpeedFacts | None:
    """The row's speed facts, None for any other row."""
    return row.facts if isinstance(row.facts, SpeedFacts) else None


def compares_fastest_iterations(row: MetricVerdict) -> bool:
    """Whether the row compares each process's fastest iteration (the first screen's and the
    terminal's note about them)."""
    facts = speed_facts(row)
    return facts is not None and facts.statistic is Statistic.FASTEST


def raw_ms_as_said(row: MetricVerdict) -> tuple[float, float, float] | None:
    """The milliseconds a yardstick-unit row's values came from, and their change, rounded
    as its sentence says them (`raw 9.51 ms → 9.94 ms, +4.5 %`), so that a table cell shows
    the numbers the sentence does; None for a row without them."""
    facts = speed_facts(row)
    if facts is None or facts.raw_ms is None or facts.raw_change_pct is None:
        return None
    base, now = (_ms_as_said(value) for value in facts.raw_ms)
    return base, now, float(f"{facts.raw_change_pct:+.1f}")


def _ms_as_said(value: float) -> float:
    """`value` rounded as format_value writes milliseconds."""
    return float(f"{value:.3g}") if value < 1 else float(f"{value:.2f}")


def speed_said(row: MetricVerdict, facts: SpeedFacts) -> WordedRow:
    """The row's sentence, and the facts its cells show beside it."""
    raw_ms = raw_ms_as_said(row)
    pairs = too_few_pairs(row)
    return WordedRow(
        RowSentence("", _speed_words(row, facts, pairs)), raw_ms=raw_ms, too_few_pairs=pairs
    )


def _speed_words(row: MetricVerdict, facts: SpeedFacts, pairs: int | None) -> str:
    if facts.statistic is Statistic.MEDIAN:
        said = _from_medians(row, facts)
    else:
        said = _from_processes(row, facts, pairs)
    if facts.not_judged is not None:
        said += f"; {NOT_JUDGED}{ungated_words(facts.not_judged)}"
    return said + disturbed_words(facts)


def not_judged_why(row: MetricVerdict) -> str | None:
    """Why a step time was reported and not judged, as its row says it (with what follows
    that in the row: the processes left out); None for a row judged, or another family's."""
    facts = speed_facts(row)
    if facts is None or facts.not_judged is None:
        return None
    return ungated_words(facts.not_judged) + disturbed_words(facts)


def not_judged_reason(row: MetricVerdict) -> NotJudged | None:
    """Why a step time was reported and not judged, None for a row judged."""
    facts = speed_facts(row)
    return facts.not_judged.reason if facts is not None and facts.not_judged else None


def ungated_words(ungated: Ungated) -> str:
    """Why a step time may not fail the job in this comparison, and what would judge it."""
    needed = ungated.needed
    if ungated.reason is NotJudged.UNSTEADY_RUN:
        return (
            "this run's machine was unsteady (run health), so its step times support no "
            "verdict; rerun once the causes are gone, or in paired mode (run --against)"
        )
    if ungated.reason is NotJudged.UNSTEADY_BASELINE:
        return (
            "the baseline's step times were measured on an unsteady machine (its run health "
            "when baseline update recorded it) and are not vouched for; they are judged once "
            "a steady run of baseline update replaces them, or its history holds "
            f"{needed} steady runs, {PAIRED_MODE}"
        )
    return (
        f"{ungated.recorded} of {needed} default-branch runs recorded; absolute step times "
        f"are judged once the baseline's history ({needed} runs of baseline update) "
        f"shows how far whole runs of this machine differ, {PAIRED_MODE}"
    )


def disturbed_words(facts: SpeedFacts) -> str:
    """`; 1 disturbed process left out (…)`, or "" when none was."""
    if not facts.disturbed:
        return ""
    said = ", ".join(
        f"{_SIDE_OWNER[d.side]} eager twins x{d.twins_ratio:.1f} apart" for d in facts.disturbed
    )
    count = len(facts.disturbed)
    return (
        f"; {count} disturbed process{'es' if count > 1 else ''} left out ({said}: "
        f"more than x{DISTURBED_TWINS_RATIO:g}, a load spike inside the process)"
    )


def units_words(facts: SpeedFacts, normalisation: str | None) -> str:
    """How step times were compared: `raw milliseconds (…)`, or in units of the yardstick
    (which one, and why, where there were two to choose from); "" for a speedup."""
    if facts.raw_because is RawBecause.TORCH_VERSIONS:
        return f"raw milliseconds ({torch_words(facts)})"
    if facts.raw_because is RawBecause.YARDSTICK_NOT_TIMED:
        return "raw milliseconds (a run did not time the yardstick)"
    if normalisation != "yardstick":
        return ""
    return yardstick_words(facts.yardstick or GPU_BOUND, facts.yardstick_spreads_pct)


def yardstick_words(yardstick: str, spreads_pct: tuple[tuple[str, float], ...]) -> str:
    """Which yardstick step times were divided by and why: each candidate's spread where
    there were two to choose from (results/yardsticks.py), else as before there were."""
    if len(spreads_pct) < 2:
        return "in units of the yardstick timed beside them"
    listed = ", ".join(f"{YARDSTICK_NAMES[name]} ±{spread:.1f} %" for name, spread in spreads_pct)
    return (
        f"normalised by the {YARDSTICK_NAMES[yardstick]} yardstick timed beside them "
        f"(step/yardstick spread across processes: {listed})"
    )


def torch_words(facts: SpeedFacts) -> str:
    """Why step times across torch versions are raw milliseconds."""
    assert facts.torch_versions is not None  # RawBecause.TORCH_VERSIONS names them
    base, cur = facts.torch_versions
    return (
        f"torch {base} → {cur}: the yardstick runs on torch, so it is not a fixed unit across "
        "versions"
    )


def _from_processes(row: MetricVerdict, facts: SpeedFacts, pairs: int | None) -> str:
    statistic, suffix = _STATISTICS[facts.statistic]
    label = LABELS.get(_family(row.metric), row.metric) + suffix
    change = row.change if row.change is not None else 0.0
    units = units_words(facts, row.normalisation)
    unit_text = f", {units}" if units else ""
    history = facts.history
    if history is not None:
        unit_text += (
            f"; against the mean of the default branch's last {history.runs} runs, whose "
            f"spread (±{history.spread_pct:.1f} % a run) predicts ±{history.noise_pct:.1f} % "
            f"for one more"
        )
    if facts.raw_ms is not None and facts.raw_change_pct is not None:
        unit_text += (
            f"; raw {format_value(facts.raw_ms[0], 'ms')} → "
            f"{format_value(facts.raw_ms[1], 'ms')}, {facts.raw_change_pct:+.1f} %"
        )
    n_base, n_cur = facts.processes or (0, 0)
    what = (
        f"{statistic}, {n_base} pairs of processes"
        if facts.paired
        else f"{statistic}, {n_base} processes → {n_cur}"
    )
    moved = (
        f"{label} {format_value(row.baseline, row.unit)} → {format_value(row.current, row.unit)} "
        f"({change:+.1f} %; {what}{unit_text})"
    )
    if facts.not_judged is not None:
        return moved
    if history is None and facts.paired:
        where = "of the paired differences (each head process against the base process beside it)"
    elif history is None:
        where = "between the processes of both runs"
    else:
        where = f"between the default branch's last {history.runs} runs"
    if facts.gross_bound_pct is not None:
        where += (
            f"; against one stored run a step time fails only beyond the "
            f"{facts.gross_bound_pct:g} % that whole runs of one machine were measured to "
            "drift apart (step_time_gross_growth_pct)"
        )
    if pairs is not None:  # a ± from so few pairs means nothing
        return f"{moved}: {too_few_words(pairs)}"
    threshold = row.threshold if row.threshold is not None else 0.0
    noise = row.noise_pct if row.noise_pct is not None else 0.0
    said = noise_rule_words(moved, facts.rule_verdict, change, threshold, noise, where)
    if facts.rule_verdict is Verdict.INCONCLUSIVE:
        said += how_to_decide(history)
    return said


def how_to_decide(history: HistoryFacts | None) -> str:
    """What narrows an inconclusive row's noise. Against a history the noise is the default
    branch's spread from run to run, which a rerun of this run leaves as it is."""
    if history is None:
        return "; rerun with more processes (variant_processes) or iterations to decide"
    more = ""
    if history.runs < HISTORY_RUNS:
        more = f", or more of them (the baseline keeps {HISTORY_RUNS}, it has {history.runs})"
    return (
        "; to decide it, narrow the default branch's spread, which a rerun of this run leaves "
        "as it is: steadier default-branch runs (more iterations or processes in the base "
        f"branch's config){more}"
    )


def _from_medians(row: MetricVerdict, facts: SpeedFacts) -> str:
    """A row judged on each run's median and the noise each run measured of itself
    (gate/judges/speed_medians.py)."""
    change = row.change if row.change is not None else 0.0
    threshold = row.threshold if row.threshold is not None else 0.0
    noise = row.noise_pct
    label = LABELS.get(row.metric, row.metric)
    shown = (
        f"{label} {format_value(row.baseline, row.unit)} → "
        f"{format_value(row.current, row.unit)} ({change:+.1f} %)"
    )
    if facts.raw_change_pct is not None:
        shown += (
            f"; {change:+.1f} % against the machine yardstick timed beside it "
            f"(raw {facts.raw_change_pct:+.1f} %)"
        )
    limit = f"the {threshold:g} % threshold"
    if noise is None:
        beyond, caveat = limit, " (no noise measured in either run: judged on the threshold alone)"
    else:
        beyond = f"{limit} and the ±{noise:.1f} % noise of both runs"
        unmeasured = facts.noise_unmeasured
        caveat = f" (no noise measured in {_SIDE_NAMES[unmeasured[0]]})" if unmeasured else ""
    verdict = facts.rule_verdict
    if verdict is Verdict.REGRESSION:
        said = f"{shown}: worse by more than {beyond}{caveat}"
    elif verdict is Verdict.IMPROVEMENT:
        said = f"{shown}: better by more than {beyond}{caveat}"
    elif noise is None or abs(change) <= threshold:
        # Without noise the threshold alone decides (never inconclusive): within it, or not.
        said = f"{shown}: within {limit}"
    elif verdict is Verdict.INCONCLUSIVE and abs(change) > noise:
        decisive = _detectable(row)
        said = (
            f"{shown}: beyond {limit}, but the ±{noise:.1f} % noise of both runs is more "
            f"than twice the threshold: too noisy to decide it; with this noise a change is "
            f"decided only beyond {decisive:.0f} %, twice "
            f"the noise; rerun with more iterations or rounds{caveat}"
        )
    elif verdict is Verdict.INCONCLUSIVE:
        said = (
            f"{shown}: beyond {limit} but inside the ±{noise:.1f} % noise of both runs: "
            f"these runs decide changes above {_detectable(row):.1f}"
            f" %; rerun with more iterations or rounds to decide{caveat}"
        )
    else:
        said = f"{shown}: better, but inside the ±{noise:.1f} % noise: not a clear improvement"
    if facts.raw_because is RawBecause.TORCH_VERSIONS:
        said += f" (raw milliseconds: {torch_words(facts)})"
    return said


def _detectable(row: MetricVerdict) -> float:
    """The smallest change the row's comparison decides (gate/rules.py's rule; a reported
    row keeps none in its fields)."""
    return detectable_change_pct(row.noise_pct, row.threshold or 0.0)


def _family(metric: str) -> str:
    """`eager_step_ms` for `eager_step_ms_p25`."""
    return next((name for name in _FAMILIES if metric.startswith(name)), metric)
