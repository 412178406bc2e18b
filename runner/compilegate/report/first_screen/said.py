"""What the reason of one row under the first screen's table says, as facts and as words.

says_more(row)        whether the row has a reason: a code metric whose words say more
                      than the table's numbers (REASON_METRICS), a step or variant that
                      failed to run (RUN_METRICS), a count with a detail beyond it
                      (DETAIL_METRICS)
said_facts(row, worded)
                      the facts its words are composed from, and only those: rows whose
                      reasons say the same facts are said once (first_screen/grouping.py);
                      their sentences are never compared
reason_sentence(row, worded)
                      its words, in their parts (row_words/sentence.py): without the
                      family the bold lead before them names already, a new graph
                      break's place apart so that the comment can link it
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from ...gate.judges.diagnostics import (
    BreakAt,
    FallbackFacts,
    GraphBreakFacts,
    Place,
    RecompileAt,
    RecompileFacts,
)
from ...gate.row_facts_base import RowFactsBase
from ...gate.verdict import Acceptance, MetricVerdict, Verdict
from .. import wording as w
from ..degraded_notes import fallback_reasons_of
from ..escape import shortened
from ..row_words.cuda_graphs import MORE_REASONS_NAMED, detail_skips, reasons_said
from ..row_words.diagnostics import GONE_SITES_NAMED, MORE_SITES_NAMED, count_detail
from ..row_words.numerics_reference import WithoutReference
from ..row_words.past_limit import CountMoved, PastLimit
from ..row_words.sentence import RowSentence
from ..row_words.worded import WordedRow

# Failing rows whose message says more than the table's numbers: said under the table.
REASON_METRICS = (
    "graph_break_sites",
    "cuda_graph_skips",
    "compile_work",
    "step_work",
    "numerics",
    "torch_state",
)
# A step or variant that failed to run, or could not be compared: why, in its reason.
RUN_METRICS = ("step", "variant")
# Its reason at most this long (two lines of the comment), the location at its end kept.
RUN_REASON_CHARS = 200
# These say more only when their row has a detail beyond its count (the new recompile).
DETAIL_METRICS = ("recompiles", "fallbacks_to_eager")


@dataclass(frozen=True)
class RecompileSaid:
    """A recompile count's detail: its first new recompile, and whether the recompile limit
    is hit now and was not before."""

    first_new: tuple[RecompileAt, ...]
    limit_newly_hit: bool


@dataclass(frozen=True)
class FallbackSaid:
    """A fallback count's detail: why its first frame fell back (the run's words)."""

    first_reason: tuple[str, ...]


@dataclass(frozen=True)
class SkipsSaid:
    """CUDA graphs skipped: torch's reason and place of each skip named (the first and the
    next MORE_REASONS_NAMED; not how many instances each had), and how many skips there
    are."""

    named: tuple[tuple[str, str | None, int | None], ...]
    count: int


@dataclass(frozen=True)
class BreaksSaid:
    """A graph-break row: its verdict and acceptance; its first new site (place, cause and
    torch's reason), the places of the next MORE_SITES_NAMED and how many are new; else the
    sites gone that are named; the allowance (said for a pass) and how many sites there are
    (said where none is new or gone)."""

    verdict: Verdict
    accepted_by: Acceptance | None
    first_new: BreakAt | None
    more_new: tuple[Place, ...]
    new_count: int
    gone: tuple[BreakAt, ...]
    allowed_new: float | None
    sites_now: int | None


@dataclass(frozen=True)
class RowSaid:
    """Any other row: its verdict, acceptance and the facts its judge found. Compared and
    hashed on `key`, the facts made hashable (hashable_form): a changed setting's values
    may be a mapping (numerics: {'tol': 1.0}), which a frozen dataclass cannot hash."""

    verdict: Verdict
    accepted_by: Acceptance | None
    facts: RowFactsBase = field(compare=False)
    key: object = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", hashable_form(self.facts))


def hashable_form(value: object) -> object:
    """`value` with every dataclass, mapping, list and set inside it made a tuple (or a
    frozenset): equal forms for equal facts, and hashable."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__name__, *(hashable_form(getattr(value, f.name)) for f in fields))
    if isinstance(value, Mapping):
        return ("mapping", *((hashable_form(k), hashable_form(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(hashable_form(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(hashable_form(item) for item in value)
    return value


SaidFacts: TypeAlias = (
    RecompileSaid | FallbackSaid | SkipsSaid | WithoutReference | PastLimit | BreaksSaid | RowSaid
)


def says_more(row: MetricVerdict) -> bool:
    """Whether the row has a reason under the table."""
    if row.metric in REASON_METRICS:
        return True
    if row.metric in RUN_METRICS:
        return row.verdict in w.FAILING
    return row.metric in DETAIL_METRICS and bool(count_detail(row.facts))


def said_facts(row: MetricVerdict, worded: WordedRow) -> SaidFacts:
    """The facts reason_sentence composes the row's reason from, and only those (`worded`:
    what the row's family said of it, row_words.worded_row)."""
    facts = row.facts
    if row.metric in DETAIL_METRICS and count_detail(facts):
        if isinstance(facts, RecompileFacts):
            return RecompileSaid(facts.new[:1], facts.limit_newly_hit)
        if isinstance(facts, FallbackFacts):
            return FallbackSaid(fallback_reasons_of(facts)[:1])
    skips = detail_skips(facts)
    if skips is not None:
        named = skips[: 1 + MORE_REASONS_NAMED]
        return SkipsSaid(tuple((skip.reason, skip.file, skip.line) for skip in named), len(skips))
    if row.metric in RUN_METRICS:
        return RowSaid(row.verdict, row.accepted_by, facts)
    weakened = _without_reference(worded)
    if weakened is not None:
        return weakened
    past = worded.past_limit if row.metric == "compile_work" else None
    if past is not None:
        return past
    if isinstance(facts, GraphBreakFacts):
        return _breaks_said(row, facts)
    return RowSaid(row.verdict, row.accepted_by, facts)


def _breaks_said(row: MetricVerdict, facts: GraphBreakFacts) -> BreaksSaid:
    """What graph_break_sentence says of the row's sites (an accepted row: as a regression)."""
    judged = Verdict.REGRESSION if row.accepted_by is not None else row.verdict
    more = facts.new[1 : 1 + MORE_SITES_NAMED]
    return BreaksSaid(
        row.verdict,
        row.accepted_by,
        facts.new[0] if facts.new else None,
        tuple(Place(site.file, site.line) for site in more),
        len(facts.new),
        () if facts.new else facts.gone[:GONE_SITES_NAMED],
        facts.allowed_new if facts.new and judged is Verdict.PASS else None,
        None if facts.new or facts.gone else facts.sites_now,
    )


def reason_sentence(row: MetricVerdict, worded: WordedRow) -> RowSentence:
    """The message a reason shows: for a count (DETAIL_METRICS) only what follows its
    `count a → b (allowed …); `, which the table already says (for CUDA graphs skipped, the
    new skips' reasons and places); for compile work only the counts past the limit (every
    count moved is in the version's gate rows); a sentence that opens with the row's family
    (`step work: …`) without it, which the reason's bold lead says."""
    facts = row.facts
    if row.metric in DETAIL_METRICS and count_detail(facts):
        return RowSentence("", "; ".join(count_detail(facts)))
    skips = detail_skips(facts)
    if skips is not None:
        return RowSentence("", reasons_said(skips))
    if row.metric in RUN_METRICS:
        return RowSentence("", shortened(worded.text(), RUN_REASON_CHARS))
    weakened = _without_reference(worded)
    if weakened is not None:  # the table says pass → pass: only why it needs a look
        return RowSentence("", weakened.words())
    past = worded.past_limit if row.metric == "compile_work" else None
    if past is not None:
        return RowSentence("", f"{counts_text(past.counts)}{past.why}")
    sentence = worded.sentence
    if sentence.lead == w.metric_name(row.metric):
        return dataclasses.replace(sentence, lead="")
    return sentence


def _without_reference(worded: WordedRow) -> WithoutReference | None:
    """A passing numerics row's check without its float64 reference: why it needs a look."""
    return worded.look if isinstance(worded.look, WithoutReference) else None


def counts_text(counts: Sequence[CountMoved]) -> str:
    """`graphs 1 → 5, compile records 1 → 6`."""
    return ", ".join(count.words() for count in counts)
