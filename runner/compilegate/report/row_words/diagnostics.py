"""The words of the diagnostics rows: recompiles, graph-break sites, fallbacks to eager
(gate/judges/diagnostics.py finds them).

    recompiles 0 → 2 (allowed increase: 0); new: forward at model.py:51: len(x) == 32
    new graph break at model.py:42 (cause: util.py:7): Data-dependent branching
    graph break gone: model.py:42 (Data-dependent branching)
    fallbacks to eager 1 → 1: unchanged

Torch's own text (a break's reason, a failed guard, why a frame fell back) is the
document's and is said as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

from ...gate.judges.diagnostics import (
    BreakAt,
    CountFacts,
    FallbackFacts,
    GraphBreakFacts,
    Place,
    RecompileFacts,
)
from ...gate.verdict import MetricVerdict, Verdict
from ..absence_words import recompile_reason_words as reason_words
from ..degraded_notes import fallback_words
from .sentence import RowSentence

COUNT_LABELS = {
    "recompiles": "recompiles",
    "fallbacks_to_eager": "fallbacks to eager",
    "ddp_splits": "DDP splits at gradient-bucket boundaries",
}
# New graph-break sites named after the first one (the rest are counted).
MORE_SITES_NAMED = 3
# Gone graph-break sites named, with their reasons.
GONE_SITES_NAMED = 3
LIMIT_HIT = "the recompile limit was hit: that frame now runs eagerly"


def count_words(row: MetricVerdict, facts: CountFacts) -> str:
    """`recompiles 0 → 2 (allowed increase: 0); new: …`, or why the count held."""
    moved = f"{COUNT_LABELS.get(row.metric, row.metric)} {facts.before} → {facts.after}"
    allowed = f"{facts.allowed_increase:g}"
    if row.verdict in (Verdict.REGRESSION, Verdict.ACCEPTED):
        return f"{moved} (allowed increase: {allowed})" + "".join(
            f"; {clause}" for clause in count_detail(facts)
        )
    if row.verdict is Verdict.IMPROVEMENT:
        return f"{moved}: fewer than in the baseline"
    if facts.after > facts.before:
        return f"{moved}: within the allowed increase of {allowed}"
    return f"{moved}: unchanged"


def count_detail(
    facts: object,
    trim: Callable[[str], str] | None = None,
    said_elsewhere: Sequence[str] = (),
) -> list[str]:
    """What a count row says beyond its count when it grew past its allowance, one clause
    each: the first new recompile and a newly hit limit, or why the first frame fell back
    to eager; [] for facts of another kind. `trim` is applied to torch's text in them (the
    first screen leaves out what a graph break's reason quotes already)."""
    trim = trim or _as_is
    if isinstance(facts, RecompileFacts):
        clauses = []
        if facts.new:
            event = facts.new[0]
            where = place_name(Place(event.file, event.line))
            clauses.append(f"new: {event.function} at {where}: {trim(reason_words(event.reason))}")
        if facts.limit_newly_hit:
            clauses.append(LIMIT_HIT)
        return clauses
    if isinstance(facts, FallbackFacts):
        if facts.fallbacks is None:  # an older document's sentence: trimmed as text
            return [trim(reason) for reason in facts.reasons[:1]]
        return [
            fallback_words(fallback, facts.limit, said_elsewhere)
            for fallback in facts.fallbacks[:1]
        ]
    return []


def graph_break_sentence(row: MetricVerdict, facts: GraphBreakFacts) -> RowSentence:
    """`new graph break at model.py:42: <torch's reason>; and 2 more: …`, the sites gone, or
    how many held; a new break's place is the sentence's site."""
    if facts.new:
        first, *more = facts.new
        after = f"{_caused_at(first)}: {first.reason}"
        if more:
            named = ", ".join(place_name(site) for site in more[:MORE_SITES_NAMED])
            after += f"; and {len(more)} more: {named}"
        if row.verdict is Verdict.PASS:
            after += f" (within the allowed {facts.allowed_new:g} new sites)"
        return RowSentence("", "new graph break at ", place_name(first), after)
    if facts.gone:
        return RowSentence(
            "",
            "graph break gone: "
            + ", ".join(
                f"{place_name(site)} ({site.reason})" for site in facts.gone[:GONE_SITES_NAMED]
            ),
        )
    return RowSentence("", f"no new graph-break sites ({facts.sites_now} as before)")


def break_reasons_said(row_facts: object) -> tuple[str, ...]:
    """Torch's reasons that a graph-break row's words quote (graph_break_sentence)."""
    if not isinstance(row_facts, GraphBreakFacts):
        return ()
    if row_facts.new:
        return (row_facts.new[0].reason,)
    return tuple(site.reason for site in row_facts.gone[:GONE_SITES_NAMED])


def new_break_site(row: MetricVerdict) -> Place | None:
    """Where the first new graph break of a row is, when the row has one."""
    facts = row.facts
    if not isinstance(facts, GraphBreakFacts) or not facts.new:
        return None
    return Place(facts.new[0].file, facts.new[0].line)


def _caused_at(site: BreakAt) -> str:
    """After a break's place (`model.py:42`): ` (cause: util.py:7)` when torch says the
    break was caused elsewhere, else ""."""
    cause = site.cause
    if cause is None or (cause.file, cause.line) == (site.file, site.line):
        return ""
    return f" (cause: {place_name(cause)})"


def place_name(place: BreakAt | Place) -> str:
    """`model.py:42`, or the file alone when the line is unknown."""
    return f"{place.file}:{place.line}" if place.line is not None else place.file


def _as_is(text: str) -> str:
    return text
