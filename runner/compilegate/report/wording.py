"""Words and numbers for the reader: metric names, variant names, icons, speedups and step
counts. Shared by the PR comment and the terminal, so both say the same. A gate row's own
numbers (its values rounded to their noise, change, limit, noise) are row_cells.py's.

Icons have one meaning each, in the comment and in the terminal:

    ❌  this fails the job (a regression, an error, something the gate could not judge)
    ⚠️  this does not fail the job but needs a look (inside the noise: rerun to decide; an
        exact count that moved within its tolerance: row_words/moved_counts.py)

Nothing else gets an icon: a pass is the word "pass", an improvement the word "better", and
a speed is a number with its interval, never a green tick (a variant 0.92× as fast as eager
passes the gate and is still slower than eager).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ..gate.run_set import VersionOutcome
from ..gate.verdict import VERDICT_EXIT_CODES, MetricVerdict
from ..results.model import Variant

FAIL_ICON = "❌"
LOOK_ICON = "⚠️"
ICON_LEGEND = f"{FAIL_ICON} fails the job · {LOOK_ICON} does not fail it, but needs a look"
# metric -> what a reader calls it
METRIC_NAMES = {
    "speedup": "speedup vs eager",
    "eager_step_ms": "eager step time",
    "compiled_step_ms": "compiled step time",
    "compile_s": "compile time (wall)",
    "compile_cpu_s": "compile time (CPU)",
    "compile_instructions": "compile instructions",
    "compile_work": "compile work",
    "step_work": "step work",
    "recompiles": "recompiles",
    "graph_break_sites": "graph breaks",
    "fallbacks_to_eager": "fallbacks to eager",
    "ddp_splits": "DDP splits",
    "cuda_graph_skips": "CUDA graphs skipped",
    "numerics": "numerics",
    "peak_bytes": "peak memory",
    "torch_state": "torch settings",
    "step": "the step",
    "variant": "the variant",
}
# The families the headline speaks of, in the order it names them.
FAMILIES = (
    "step speed",
    "step work",
    "compile time",
    "compile work",
    "graph breaks",
    "fallbacks to eager",
    "CUDA graphs",
    "recompiles",
    "numerics",
    "memory",
    "torch settings",
    "the run",
    "comparability",
    "removed steps",
)
_FAMILY_OF = {
    "speedup": "step speed",
    "eager_step_ms": "step speed",
    "compiled_step_ms": "step speed",
    "compile_s": "compile time",
    "compile_cpu_s": "compile time",
    "compile_instructions": "compile time",
    "compile_work": "compile work",
    "step_work": "step work",
    "graph_break_sites": "graph breaks",
    "fallbacks_to_eager": "graph breaks",
    "ddp_splits": "compile work",
    "cuda_graph_skips": "CUDA graphs",
    "recompiles": "recompiles",
    "numerics": "numerics",
    "peak_bytes": "memory",
    "torch_state": "torch settings",
    "step": "the run",
    "variant": "the run",
}
# A row whose family is named after another metric: failing, the headline names the row's
# own metric (a fallback to eager, whether or not the graph-break sites held).
NAMED_WHEN_ALONE = {"fallbacks_to_eager": "graph_break_sites"}
FAILING = frozenset(v for v, code in VERDICT_EXIT_CODES.items() if code != 0)
VERDICT_WORDS = {
    "regression": "worse",
    "error": "failed to run",
    "missing": "not measured",
    "removed": "removed",
    "incomparable": "not comparable",
    "accepted": "worse, accepted",
    "inconclusive": "inside the noise",
    "improvement": "better",
    "new": "new",
    "skipped": "skipped",
    "pass": "pass",
}


_QUANTILE = re.compile(r"^(?P<base>.+)_p(?P<q>\d{1,2})$")


def metric_name(metric: str) -> str:
    """`compile time (wall)`; `compiled step time, 25th percentile` for `compiled_step_ms_p25`."""
    if metric in METRIC_NAMES:
        return METRIC_NAMES[metric]
    quantile = _QUANTILE.match(metric)
    if quantile and quantile["base"] in METRIC_NAMES:
        return f"{METRIC_NAMES[quantile['base']]}, {int(quantile['q'])}th percentile"
    return metric.replace("_", " ")


def without_quantile(metric: str) -> str:
    """`compiled_step_ms` for `compiled_step_ms_p25`; any other metric as it is."""
    quantile = _QUANTILE.match(metric)
    return quantile["base"] if quantile and quantile["base"] in METRIC_NAMES else metric


def gated(row: MetricVerdict) -> bool:
    """False for a row the gate reports and never judges (issue 14's `gated` field)."""
    return getattr(row, "gated", True) is not False


# Rows about a whole step or variant: what kind of trouble, by verdict.
_RUN_FAMILIES = {
    "error": "the run",
    "incomparable": "comparability",
    "removed": "removed steps",
    "missing": "the run",
}
# How the headline says a failing family when it is the only one, and in a list.
FAILING_ALONE = {
    "the run": "the run failed",
    "comparability": "not comparable with the baseline",
    "removed steps": "steps or variants of the baseline are gone",
}
FAILING_IN_LIST = {
    "the run": "a failed run",
    "comparability": "comparability with the baseline",
    "removed steps": "removed steps or variants",
}


def row_family(row: MetricVerdict) -> str | None:
    """The headline's family of a row; None for a step or variant row that is not trouble."""
    if row.metric in ("step", "variant"):
        return _RUN_FAMILIES.get(row.verdict)
    return family(row.metric)


def family(metric: str) -> str:
    if metric in _FAMILY_OF:
        return _FAMILY_OF[metric]
    if "step_ms" in metric or "speedup" in metric:
        return "step speed"
    if metric.startswith("compile"):
        return "compile time"
    return metric.replace("_", " ")


def icon(verdict: str) -> str:
    """❌ for what fails the job, ⚠️ for inconclusive, nothing otherwise."""
    if verdict in FAILING:
        return FAIL_ICON
    return LOOK_ICON if verdict == "inconclusive" else ""


def verdict_word(verdict: str) -> str:
    return VERDICT_WORDS.get(verdict, verdict)


# The parts config/model.py's Variant adds to a derived id, as the reader says them.
_DERIVED_OPTIONS = {
    "dynamic": "dynamic",
    "static": "static",
    "step": "whole step",
    "fullgraph": "fullgraph",
}


def variant_name(variant: Variant | str | None) -> str:
    """`default`, `default, whole step` (compile: step), `reduce-overhead, dynamic`; a
    variant the config named keeps its name."""
    if variant is None:
        return "-"
    if isinstance(variant, str):
        mode, *options = variant.split("+")
        if options and all(option in _DERIVED_OPTIONS for option in options):
            return ", ".join([mode, *(_DERIVED_OPTIONS[option] for option in options)])
        return variant  # a name the config gave (or the bare mode)
    derived = [variant.mode or "default"]
    if variant.dynamic is not None:
        derived.append("dynamic" if variant.dynamic else "static")
    if variant.compile_target == "step":
        derived.append("whole step")
    if variant.fullgraph:
        derived.append("fullgraph")
    if variant.backend not in (None, "inductor"):
        derived.append(str(variant.backend))
    generated = "+".join([derived[0], *[p.replace("whole step", "step") for p in derived[1:]]])
    return ", ".join(derived) if variant.id in ("", generated) else variant.id


def row_subject(row: MetricVerdict) -> str:
    """`transformer · default, whole step`, `transformer · eager`, `transformer`."""
    if row.variant is None:
        return row.step
    return f"{row.step} · {variant_name(row.variant)}"


def and_list(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def version_error(version: VersionOutcome) -> str | None:
    """Why a version of a run set has no result: its error, or where its document was not."""
    if version.never_ran:
        return (
            "this leg never ran: no artifact from its job (cancelled, failed before its "
            "first step, or no runner took it)"
        )
    if version.missing:
        return f"no result document at {version.source}"
    return version.error


def plain_torch(version: object) -> str:
    """`2.4.1` for `2.4.1+cu121`: the local version suffix says how it was built."""
    return str(version).split("+")[0]


# -- numbers ------------------------------------------------------------------------------


# A speedup bound beyond this is shown as `100+`: one process on a loaded machine gave
# "46.7× (0.0–833561164265529984.0)", an interval that bounds nothing.
SPEEDUP_BOUND_SHOWN = 100.0


def speedup_text(estimate: float, low: float | None = None, high: float | None = None) -> str:
    """`0.92× (0.88–0.97)`; one decimal only when the interval is wider than ±1; a bound
    beyond SPEEDUP_BOUND_SHOWN as `100+`."""
    if low is None or high is None:
        return f"{estimate:.2f}×"
    places = 2 if (high - low) / 2 < 1 else 1  # a ratio near 1: 0.95 is not 1.0
    shown_high = (
        f"{SPEEDUP_BOUND_SHOWN:.0f}+" if high > SPEEDUP_BOUND_SHOWN else f"{high:.{places}f}"
    )
    return f"{estimate:.{places}f}× ({low:.{places}f}–{shown_high})"


def speed_words(low: float | None, high: float | None) -> str:
    """What an interval of compiled ÷ eager speed says, in words."""
    if low is None or high is None:
        return "no interval"
    if high < 1:
        return "slower"
    if low > 1:
        return "faster"
    return "no clear gain"


def steps_text(value: float | None) -> str:
    """`3,100 steps`; break-evens are rounded to two significant digits (they are ratios of
    two noisy numbers)."""
    if value is None or not math.isfinite(value):
        return "never"
    return f"{steps_count(value)} steps"


def steps_count(value: float) -> str:
    """`3,100` (steps_text without its unit, for the low end of an interval); `never` for a
    number that is not finite."""
    if not math.isfinite(value):
        return "never"
    rounded = float(f"{value:.2g}") if value >= 100 else round(value)
    return f"{rounded:,.0f}"
