"""The words of the compile-cost rows (gate/judges/compile_cost.py): wall seconds, CPU
seconds, torch's compile-work counts and the compile's instruction count; and the counts a
compile-work row crossed its tolerance with, for the reasons under the first screen's table."""

from __future__ import annotations

from ...gate.judges.compile_cost import (
    CompileCpuFacts,
    CompileInstructionsFacts,
    CompileWallFacts,
    CompileWorkFacts,
    CountChange,
    CpuJudgement,
    InstructionsJudgement,
    UngatedWhy,
    WallJudgement,
    WorkJudgement,
)
from ...gate.rules import Side
from ...gate.verdict import MetricVerdict, Verdict
from ..absence_words import absence_words
from ..wording import FAILING
from .moved_counts import MovedCount, MovedWithinTolerance, may_need_a_look, within_tolerance
from .past_limit import CountMoved, PastLimit, per_op_words, why_words
from .rules import noise_rule_words, threshold_words
from .sentence import RowSentence
from .worded import WordedRow

# A compile-work count's name in a sentence (gate/judges/compile_cost.py COUNTS).
COUNT_NAMES = {
    "graphs": "graphs",
    "fx_nodes": "FX nodes",
    "guards": "guards",
    "generated_kernels": "generated kernels",
    "compile_records": "compile records",
    "backward_compile_records": "backward compile records",
}
REFRESH = "refresh the baseline on the default branch to gate it"
COLD_NOISE = "of both runs' cold compiles"
_SIDES = {Side.BASELINE: "the baseline", Side.RUN: "this run"}
_UNGATED = {UngatedWhy.AUTOTUNING: "autotuning may pick another kernel mix"}


# -- wall seconds -----------------------------------------------------------------------------


def compile_wall_words(row: MetricVerdict, facts: CompileWallFacts) -> str:
    growth_s = facts.cur_s - facts.base_s
    shown = (
        f"compile time {facts.base_s:.1f} s → {facts.cur_s:.1f} s "
        f"({growth_s:+.1f} s, {facts.change_pct:+.1f} %)"
    )
    verdict, threshold_pct = row.verdict, facts.threshold_pct
    if facts.judged is WallJudgement.NOT_GATED:
        return (
            f"{shown}: reported, not gated: wall time moves with the machine's load; the "
            "baseline's policy gates it with gate_compile_wall_time: true (a dedicated runner)"
        )
    if facts.judged is WallJudgement.UNDER_FLOOR:
        return f"{shown}: changes under {facts.floor_s:g} s are ignored"
    if facts.judged is WallJudgement.THRESHOLD or facts.noise_pct is None:
        return f"{shown}: {threshold_words(verdict, threshold_pct)}"
    return noise_rule_words(
        shown, verdict, facts.change_pct, threshold_pct, facts.noise_pct, COLD_NOISE
    )


# -- CPU seconds ------------------------------------------------------------------------------


def compile_cpu_words(row: MetricVerdict, facts: CompileCpuFacts) -> str:
    base_s, cur_s, change_pct = facts.base_s, facts.cur_s, facts.change_pct
    threshold_pct = facts.threshold_pct
    if facts.judged is CpuJudgement.BASELINE_PREDATES:
        return (
            f"compile CPU time {cur_s:.1f} s: the baseline predates it, nothing to judge "
            f"against; {REFRESH}"
        )
    assert base_s is not None and change_pct is not None and threshold_pct is not None
    moved = f"compile CPU time {base_s:.1f} s → {cur_s:.1f} s ({change_pct:+.1f} %"
    if facts.judged is CpuJudgement.WARM_CACHE:
        warm = " and ".join(_SIDES[side] for side in facts.warm_sides)
        return (
            f"{moved}): reported, not judged: {warm} compiled from a shared, warm Inductor "
            "cache (--inductor-cache), not cold"
        )
    n_base, n_cur = facts.cold_compiles or (1, 1)
    compiles = (
        f"{n_base} pairs of cold compiles" if facts.paired else f"{n_base} → {n_cur} cold compiles"
    )
    shown = f"{moved}, geometric means of {compiles})"
    verdict = row.verdict
    if facts.noise_pct is None and verdict is Verdict.INCONCLUSIVE:
        return (
            f"{shown}: beyond the {threshold_pct:g} % threshold, but one cold compile a side "
            "gives no noise estimate, and CPU time moves with the machine's load"
        )
    if facts.noise_pct is None:
        return f"{shown}: {threshold_words(verdict, threshold_pct)} (no noise estimate)"
    return noise_rule_words(shown, verdict, change_pct, threshold_pct, facts.noise_pct, COLD_NOISE)


# -- instructions -----------------------------------------------------------------------------


def _absent_words(facts: CompileInstructionsFacts) -> str | None:
    if not facts.absent:
        return None
    return absence_words(facts.absent, torch=facts.absent_torch)


def compile_instructions_words(row: MetricVerdict, facts: CompileInstructionsFacts) -> str:
    if facts.judged is InstructionsJudgement.NOT_COUNTED:
        why = _absent_words(facts) or "not counted"
        return (
            f"compile instructions: the baseline counted {_instructions(facts.base)}; this run "
            f"did not ({why}): reported, not judged"
        )
    if facts.judged is InstructionsJudgement.BASELINE_LACKS:
        said = _absent_words(facts)
        why = f" ({said})" if said else ""
        return (
            f"compile instructions {_instructions(facts.cur)}: the baseline has none{why}, "
            f"nothing to judge against; {REFRESH}"
        )
    assert facts.change_pct is not None and facts.threshold_pct is not None
    moved = (
        f"compile instructions {_instructions(facts.base)} → {_instructions(facts.cur)} "
        f"({facts.change_pct:+.1f} %)"
    )
    return f"{moved}: {threshold_words(row.verdict, facts.threshold_pct)}"


def _instructions(count: int | None) -> str:
    """`41.20 G`: instructions in billions (a compile runs tens to thousands of them)."""
    return "-" if count is None else f"{count / 1e9:.2f} G"


# -- work counts ------------------------------------------------------------------------------


# A judged compile-work sentence opens with it (`compile work: …`); one about counts not
# judged with COUNTS_LEAD.
LEAD = "compile work"
COUNTS_LEAD = "compile-work counts"


def compile_work_said(row: MetricVerdict, facts: CompileWorkFacts) -> WordedRow:
    """The row's sentence, the counts its cell shows (past the limit, else the one whose
    values the gate gave it), and the judged counts that moved while it passed."""
    return WordedRow(
        compile_work_sentence(row, facts),
        past_limit=counts_past_limit(row),
        count_shown=count_of_values(row),
        look=_moved_within_tolerance(row, facts),
    )


def _moved_within_tolerance(
    row: MetricVerdict, facts: CompileWorkFacts
) -> MovedWithinTolerance | None:
    """The judged counts of a passing, gated row that moved (moved_counts.py); none where no
    count is judged (an upgrade: the row says so)."""
    if not may_need_a_look(row) or facts.judged is not WorkJudgement.JUDGED:
        return None
    if any(not u.names for u in facts.ungated):
        return None
    ungated = {name for u in facts.ungated for name in u.names}
    moved = [
        MovedCount(COUNT_NAMES[c.name], c.before, c.after)
        for c in facts.changes
        if c.before != c.after and c.name not in ungated
    ]
    return within_tolerance(moved, facts.tolerance_pct)


def compile_work_sentence(row: MetricVerdict, facts: CompileWorkFacts) -> RowSentence:
    """A compile-work row's sentence: `compile work` or `compile-work counts` its lead."""
    if facts.judged is WorkJudgement.NOT_MEASURED:
        names = ", ".join(COUNT_NAMES[name] for name in facts.unmeasured)
        return RowSentence(COUNTS_LEAD, f"{names + ' ' if names else ''}not measured in this run")
    if facts.judged is WorkJudgement.BASELINE_PREDATES:
        return RowSentence(
            COUNTS_LEAD,
            f"the baseline predates them, nothing to judge this run's against; {REFRESH}",
        )
    moved = [change for change in facts.changes if change.before != change.after]
    if moved:
        message = f"{_listing(moved)}: {why_words(row.verdict, facts.tolerance_pct)}"
    else:
        message = "every count as in the baseline"
    if facts.eager_ops is not None and moved:
        message += (
            f"; the compiled region ran {facts.eager_ops[0]} → {facts.eager_ops[1]} ATen ops "
            "eager: FX nodes, guards and kernels are judged per op, graphs and compile "
            "records as counts"
        )
    if facts.ungated:
        message += "; " + _ungated_words(facts)
    return RowSentence(LEAD, message)


def _listing(changes: list[CountChange]) -> str:
    """`graphs 1 → 2, FX nodes 120 → 178 (0.3 → 0.297 per op)`."""
    return ", ".join(f"{COUNT_NAMES[c.name]} {c.before} → {c.after}{_per_op(c)}" for c in changes)


def _per_op(change: CountChange) -> str:
    return per_op_words(change.per_op)


def _ungated_words(facts: CompileWorkFacts) -> str:
    if any(u.why is UngatedWhy.ACROSS_TORCH for u in facts.ungated):
        versions = f" (torch {' → '.join(facts.torch_versions)})" if facts.torch_versions else ""
        return (
            f"reported, not gated across torch versions{versions}: each version counts its "
            "own way; compile CPU time judges the upgrade"
        )
    return "; ".join(
        f"{COUNT_NAMES[name]} not gated: {_UNGATED[u.why]}"
        for u in facts.ungated
        for name in u.names
    )


# -- the counts that crossed the tolerance ----------------------------------------------------


def counts_past_limit(row: MetricVerdict) -> PastLimit | None:
    """The row's counts past its limit; None for a row that is not about compile-work
    counts, or when none is past. Judged on each count's raw change, as the table's cell
    shows it."""
    facts = row.facts
    if not isinstance(facts, CompileWorkFacts) or facts.judged is not WorkJudgement.JUDGED:
        return None
    moved = [change for change in facts.changes if change.before != change.after]
    limit = row.threshold if row.threshold is not None else 0.0
    past = []
    for change in moved:
        raw_pct = raw_change_pct(change.before, change.after)
        grew = raw_pct > limit and change.after - change.before >= 1
        if (grew and row.verdict in FAILING) or (
            -raw_pct > limit and row.verdict is Verdict.IMPROVEMENT
        ):
            past.append(CountMoved(COUNT_NAMES[change.name], change.before, change.after))
    if not past:
        return None
    # What follows the last count the row lists, to the end of that clause.
    return PastLimit(tuple(past), moved[-1].per_op, row.verdict, facts.tolerance_pct)


def count_of_values(row: MetricVerdict) -> CountMoved | None:
    """The first count a compile-work row lists (one that moved) with the values the gate
    gave the row; None when it lists none such."""
    facts = row.facts
    if not isinstance(facts, CompileWorkFacts) or facts.judged is not WorkJudgement.JUDGED:
        return None
    for change in facts.changes:
        moved = change.before != change.after
        if moved and (change.before, change.after) == (row.baseline, row.current):
            return CountMoved(COUNT_NAMES[change.name], change.before, change.after)
    return None


def raw_change_pct(before: int, after: int) -> float:
    return (after - before) / max(before, 1) * 100
