"""Compile cost, three ways, each judged by what it can be trusted for.

    metric         what                                   judged
    compile_work   torch's own counts: graphs, FX nodes,  growth of any count beyond
                   guards, generated kernels, forward     compile_work_growth_pct (and by
                   and backward compile records           at least 1): regression, whatever
                                                          the load; a drop: improvement.
                                                          FX nodes, guards and kernels per
                                                          eager op of the compiled region
    compile_cpu_s  CPU seconds of the compiling process   the noise rule: beyond
                   and its compile workers                compile_cpu_time_growth_pct and
                                                          beyond the noise of both runs'
                                                          cold compiles pooled
    compile_s      wall seconds of the cold compile       only where the baseline's policy
                                                          says gate_compile_wall_time: true
                                                          (a dedicated runner); else
                                                          reported, never a failure

Compile work is judged against the size of what was compiled (issue 31): FX nodes, guards
and generated kernels grow with the model, so where both runs counted the ATen ops of one
eager call of the compiled region (`compile_cost.eager_ops`, child/compile_size.py) they are
judged per op: a regression needs that ratio beyond the tolerance *and* the raw count up.
A pull request that adds a layer then passes, while the same model compiling into more
graphs (counted raw), guards or kernels per op fails. A document without `eager_ops` (from
before it) is judged on the raw counts, as before.

Why: on a shared 2-core runner, two busy neighbours made a cold compile's wall time ×3.4
and its CPU time ×1.23 (single runs: ×1.04 to ×1.45), while the counts were identical in
every run (shared/reference/compile-time-measurement.md §7). Hence the defaults: 5 % for the
counts, 50 % for the CPU seconds (above what load alone moved them; a dedicated runner's
baseline may lower it), and a run with one cold compile a side, which has no noise
estimate, is at worst `inconclusive` on CPU seconds.

Not judged, and said so in the row:
- counts across torch versions (an upgrade): what torch counts as a guard or a kernel is
  the version's own, so the counts are reported beside each other (`gated` false); the
  CPU seconds still judge the upgrade's compile cost;
- generated kernels under max-autotune modes: autotuning may pick another kernel mix;
- CPU seconds of a side that compiled from a shared, warm Inductor cache (--inductor-cache:
  no cold samples): a warm compile is not a cold one;
- a baseline that predates compile cost (no `compile_cost`): the counts and CPU seconds
  are `new` (nothing to compare with; exit 0) and the row says to refresh the baseline.
  A run that lacks them while its baseline has them is `missing` (exit 4), as for any
  gated metric. Wall time of such an old baseline excluded the `torch.compile()` call and
  the backward compile, so it is shown, not gated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeGuard  # 3.10+: for the checker only (requires-python is 3.9)

from ...results.model import CompileCost, Variant
from ...results.processes import geometric_mean
from ...results.stats import compare_sides
from ..rules import (
    classify_speed_change,
    combined_noise_pct,
    detectable_change_pct,
    is_number,
    missing,
    noise_rule_message,
)
from ..verdict import MetricVerdict
from .sides import Sides

COMPILE_TIME_FLOOR_S = 1.0
COUNTS = {
    "graphs": "graphs",
    "fx_nodes": "FX nodes",
    "guards": "guards",
    "generated_kernels": "generated kernels",
    "compile_records": "compile records",
    "backward_compile_records": "backward compile records",
}
# Counts that grow with the compiled region's size: judged per eager op where both sides
# measured it (compile_cost.eager_ops). Graphs and compile records are not: one more layer
# compiles into the same graphs.
SIZED_COUNTS = ("fx_nodes", "guards", "generated_kernels")
REFRESH = "refresh the baseline on the default branch to gate it"


def judge(sides: Sides) -> list[MetricVerdict]:
    if not isinstance(sides.base, Variant) or not isinstance(sides.head, Variant):
        return []  # eager compiles nothing
    rows = [judge_wall_time(sides), judge_work(sides), judge_cpu_time(sides)]
    return [row for row in rows if row is not None]


def _variants(sides: Sides) -> tuple[Variant, Variant]:
    base, head = sides.pair
    assert isinstance(base, Variant) and isinstance(head, Variant)  # judge() checked
    return base, head


# -- wall seconds -----------------------------------------------------------------------------


def judge_wall_time(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_s, cur_s = base.compile_s, cur.compile_s
    unjudged = missing(subject, "compile_s", base_s, cur_s)
    if unjudged is not None or base_s is None or cur_s is None:
        return unjudged
    threshold_pct = sides.policy.thresholds["compile_time_growth_pct"]
    growth_s = cur_s - base_s
    change_pct = growth_s / max(base_s, COMPILE_TIME_FLOOR_S) * 100
    shown = f"compile time {base_s:.1f} s → {cur_s:.1f} s ({growth_s:+.1f} s, {change_pct:+.1f} %)"
    values = (base_s, cur_s)
    if not sides.policy.gate_compile_wall_time:
        why = (
            "reported, not gated: wall time moves with the machine's load; the baseline's "
            "policy gates it with gate_compile_wall_time: true (a dedicated runner)"
        )
        message = f"{shown}: {why}"
        return subject.measured(
            "compile_s", "pass", message, values, "s", change_pct, threshold_pct, gated=False
        )
    noise = _pooled_noise_pct(sides, "wall_s")
    if abs(growth_s) < COMPILE_TIME_FLOOR_S:
        verdict, message = "pass", f"{shown}: changes under {COMPILE_TIME_FLOOR_S:g} s are ignored"
    elif noise is None:
        verdict = classify_speed_change(change_pct, threshold_pct, None)
        message = f"{shown}: {_threshold_words(verdict, threshold_pct)}"
    else:
        verdict = classify_speed_change(change_pct, threshold_pct, noise)
        message = noise_rule_message(
            shown, verdict, change_pct, threshold_pct, noise, "of both runs' cold compiles"
        )
    return subject.measured(
        "compile_s", verdict, message, values, "s", change_pct, threshold_pct, noise_pct=noise
    )


# -- work counts ------------------------------------------------------------------------------


def judge_work(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_cost, cur_cost = base.compile_cost, cur.compile_cost
    if base_cost is None and cur_cost is None:
        return None
    if cur_cost is None:
        return subject.row(
            "compile_work", "missing", "compile-work counts: not measured in this run"
        )
    if base_cost is None:
        return subject.row(
            "compile_work",
            "new",
            "compile-work counts: the baseline predates them, nothing to judge this run's "
            f"against; {REFRESH}",
            unit="count",
            gated=False,
        )
    base_counts, cur_counts = base_cost.counts, cur_cost.counts
    threshold_pct = sides.policy.thresholds["compile_work_growth_pct"]
    ungated = _ungated_counts(sides)
    sizes = compiled_sizes(base_cost, cur_cost)
    changes: list[tuple[float, str, int, int]] = []  # (change %, name, base, current)
    unmeasured = []
    for name in COUNTS:
        before, after = getattr(base_counts, name), getattr(cur_counts, name)
        if not _is_count(before):
            continue  # the baseline's torch does not count it: nothing to hold this run to
        if not _is_count(after):
            unmeasured.append(name)
            continue
        changes.append((count_change_pct(name, before, after, sizes), name, before, after))
    if unmeasured and "torch" not in ungated:
        names = ", ".join(COUNTS[n] for n in unmeasured)
        return subject.row(
            "compile_work", "missing", f"compile-work counts: {names} not measured in this run"
        )
    if not changes:
        return None
    gated = [c for c in changes if c[1] not in ungated and "torch" not in ungated]
    # A regression needs the (per-op) count beyond the tolerance and the raw count up; an
    # improvement, the reverse: a smaller model is not less work per op.
    grown = [c for c in gated if c[0] > threshold_pct and c[3] - c[2] >= 1]
    shrunk = [c for c in gated if -c[0] > threshold_pct and c[2] - c[3] >= 1]
    listing = ", ".join(
        f"{COUNTS[name]} {before} → {after}{_per_op(name, before, after, sizes)}"
        for _, name, before, after in changes
        if before != after
    )
    if grown:
        verdict, worst = "regression", max(grown)
        why = f"grew by more than the {threshold_pct:g} % tolerance (deterministic counts)"
    elif shrunk:
        verdict, worst = "improvement", min(shrunk)
        why = f"fell by more than the {threshold_pct:g} % tolerance"
    else:
        # The count that moved most; unchanged, the graph's size (FX nodes) speaks for all.
        verdict, worst = "pass", max(changes, key=lambda c: (abs(c[0]), c[1] == "fx_nodes"))
        why = f"within the {threshold_pct:g} % tolerance"
    if listing:
        message = f"compile work: {listing}: {why}"
    else:
        message = "compile work: every count as in the baseline"
    if sizes is not None and listing:
        message += (
            f"; the compiled region ran {sizes[0]} → {sizes[1]} ATen ops eager: FX nodes, "
            "guards and kernels are judged per op, graphs and compile records as counts"
        )
    if ungated:
        message += "; " + ungated_reason(ungated)
    change_pct, _, before, after = worst
    return subject.measured(
        "compile_work",
        verdict,
        message,
        (before, after),
        "count",
        change_pct,
        threshold_pct,
        change_unit="pct",
        gated=not (ungated and not gated),
    )


def compiled_sizes(base_cost: CompileCost, cur_cost: CompileCost) -> tuple[int, int] | None:
    """(baseline, current) `eager_ops`, the compiled region's size; None unless both sides
    measured it (an older document: the counts are then judged raw)."""
    before, after = base_cost.eager_ops, cur_cost.eager_ops
    if _is_count(before) and _is_count(after) and before > 0 and after > 0:
        return before, after
    return None


def count_change_pct(name: str, before: int, after: int, sizes: tuple[int, int] | None) -> float:
    """The count's change in percent: per eager op for the counts that grow with the
    model's size (SIZED_COUNTS) when both sizes are known, else of the raw count."""
    if sizes is None or name not in SIZED_COUNTS:
        return (after - before) / max(before, 1) * 100
    per_op_before, per_op_after = before / sizes[0], after / sizes[1]
    if per_op_before == 0:
        return (after - before) / 1 * 100  # from nothing: as a raw count
    return (per_op_after - per_op_before) / per_op_before * 100


def _per_op(name: str, before: int, after: int, sizes: tuple[int, int] | None) -> str:
    if sizes is None or name not in SIZED_COUNTS:
        return ""
    return f" ({before / sizes[0]:.3g} → {after / sizes[1]:.3g} per op)"


def _ungated_counts(sides: Sides) -> dict[str, str]:
    """Counts reported but not judged, and why ("torch": all of them)."""
    ungated: dict[str, str] = {}
    if not sides.units.same_torch:
        ungated["torch"] = sides.units.why_raw.split(":")[0]
    if _variants(sides)[1].mode.startswith("max-autotune"):
        ungated["generated_kernels"] = "autotuning may pick another kernel mix"
    return ungated


def ungated_reason(ungated: Mapping[str, str]) -> str:
    if "torch" in ungated:
        return (
            f"reported, not gated across torch versions ({ungated['torch']}): each version "
            "counts its own way; compile CPU time judges the upgrade"
        )
    return "; ".join(f"{COUNTS[name]} not gated: {why}" for name, why in ungated.items())


# -- CPU seconds ------------------------------------------------------------------------------


def judge_cpu_time(sides: Sides) -> MetricVerdict | None:
    subject = sides.subject
    base, cur = _variants(sides)
    base_cost, cur_cost = base.compile_cost, cur.compile_cost
    if base_cost is None and cur_cost is None:
        return None
    base_s = base_cost.cpu_s if base_cost is not None else None
    cur_s = cur_cost.cpu_s if cur_cost is not None else None
    if base_cost is None and is_number(cur_s):
        return subject.row(
            "compile_cpu_s",
            "new",
            f"compile CPU time {cur_s:.1f} s: the baseline predates it, nothing to judge "
            f"against; {REFRESH}",
            unit="s",
            current=cur_s,
            gated=False,
        )
    unjudged = missing(subject, "compile_cpu_s", base_s, cur_s, positive=True)
    if unjudged is not None or base_s is None or cur_s is None:
        return unjudged
    assert base_cost is not None and cur_cost is not None  # both have cpu_s
    threshold_pct = sides.policy.thresholds["compile_cpu_time_growth_pct"]
    warm = [
        side
        for side, cost in (("the baseline", base_cost), ("this run", cur_cost))
        if not cost.cold_samples
    ]
    if warm:
        change_pct = (cur_s - base_s) / base_s * 100
        message = (
            f"compile CPU time {base_s:.1f} s → {cur_s:.1f} s ({change_pct:+.1f} %): reported, "
            f"not judged: {' and '.join(warm)} compiled from a shared, warm Inductor cache "
            "(--inductor-cache), not cold"
        )
        return subject.measured(
            "compile_cpu_s",
            "pass",
            message,
            (base_s, cur_s),
            "s",
            change_pct,
            threshold_pct,
            gated=False,
        )
    samples = (_cold(base_cost, "cpu_s") or [base_s], _cold(cur_cost, "cpu_s") or [cur_s])
    comparison = compare_sides(*samples, paired=sides.paired)
    noise = comparison.noise_pct
    if noise is None:
        noise = combined_noise_pct(base_cost.cpu_noise_pct, cur_cost.cpu_noise_pct)
    change_pct = comparison.change_pct
    n_base, n_cur = comparison.processes
    # The values shown are the ones the change is computed from: the geometric mean of each
    # side's cold compiles (on torch < 2.5 every process compiles cold, not only the first).
    base_s, cur_s = geometric_mean(samples[0]), geometric_mean(samples[1])
    compiles = (
        f"{n_base} pairs of cold compiles"
        if comparison.paired
        else f"{n_base} → {n_cur} cold compiles"
    )
    shown = (
        f"compile CPU time {base_s:.1f} s → {cur_s:.1f} s ({change_pct:+.1f} %, geometric "
        f"means of {compiles})"
    )
    verdict = classify_speed_change(change_pct, threshold_pct, noise)
    if noise is None:
        if verdict == "regression":
            verdict = "inconclusive"
            message = (
                f"{shown}: beyond the {threshold_pct:g} % threshold, but one cold compile a "
                "side gives no noise estimate, and CPU time moves with the machine's load"
            )
        else:
            message = f"{shown}: {_threshold_words(verdict, threshold_pct)} (no noise estimate)"
    else:
        message = noise_rule_message(
            shown, verdict, change_pct, threshold_pct, noise, "of both runs' cold compiles"
        )
    return subject.measured(
        "compile_cpu_s",
        verdict,
        message,
        (base_s, cur_s),
        "s",
        change_pct,
        threshold_pct,
        noise_pct=noise,
        detectable_change_pct=detectable_change_pct(noise, threshold_pct),
    )


def _pooled_noise_pct(sides: Sides, key: str) -> float | None:
    base_variant, cur_variant = _variants(sides)
    base = _cold(base_variant.compile_cost, key)
    cur = _cold(cur_variant.compile_cost, key)
    if not base or not cur or len(base) + len(cur) < 3:
        return None
    return compare_sides(base, cur, paired=sides.paired).noise_pct


def _cold(cost: CompileCost | None, key: str) -> list[float]:
    values = [getattr(s, key) for s in (cost.cold_samples if cost is not None else ())]
    return [float(v) for v in values if is_number(v) and v > 0]


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _threshold_words(verdict: str, threshold_pct: float) -> str:
    if verdict == "regression":
        return f"grew by more than the {threshold_pct:g} % threshold"
    if verdict == "improvement":
        return f"fell by more than the {threshold_pct:g} % threshold"
    return f"within the {threshold_pct:g} % threshold"
