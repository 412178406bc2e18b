"""Diagnostics: recompiles, graph-break sites and fallbacks to eager, each against the
allowed increase in the baseline's policy.

    metric              direction          threshold (config.DEFAULT_THRESHOLDS)
    recompiles          fewer is better    recompiles_increase: allowed increase
    graph_break_sites   fewer is better    graph_break_sites_increase: new sites, named
    fallbacks_to_eager  fewer is better    fallbacks_increase: allowed increase
    ddp_splits          fewer is better    ddp_splits_increase: allowed increase (a
                                           distributed step's splits at DDP's gradient-bucket
                                           boundaries: each one more graph, fewer fusions)

A diagnostic this run lacks is `missing`, with the reason when the variant says (its
`degraded` list, e.g. "compile diagnostics failed: ...").

Each row carries what was found as values (GraphBreakFacts, RecompileFacts,
FallbackFacts): the counts, the sites and recompiles as the documents record them, torch's
own text where it is the document's; report/row_words/diagnostics.py words them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ...results.model import (
    BreakSite,
    Fallback,
    GraphBreaks,
    RecompileEvent,
    RecompileLimit,
    RecompileReason,
    Recompiles,
    Variant,
)
from ..row_facts_base import RowFactsBase
from ..rules import MissingFacts, Subject, diagnostics_doubt, missing
from ..verdict import MetricVerdict, Verdict
from .sides import Sides

# Variant metrics the compile diagnostics produce, and their keys.
DIAGNOSTIC_METRICS = {
    "recompiles": "recompiles",
    "graph_break_sites": "graph_breaks",
    "fallbacks_to_eager": "fallbacks_to_eager",
}


@dataclass(frozen=True)
class Place:
    """A file and its line (None when the document does not know it)."""

    file: str
    line: int | None = None


@dataclass(frozen=True)
class BreakAt:
    """A graph-break site a row is about: where, torch's reason (the document's text), and
    where torch says the break was caused (a site's `cause`), when the document records it."""

    file: str
    line: int | None
    reason: str
    cause: Place | None = None

    @classmethod
    def of(cls, site: BreakSite) -> BreakAt:
        cause = site.cause
        return cls(
            site.file,
            site.line,
            site.reason,
            Place(cause.file, cause.line) if cause is not None else None,
        )


@dataclass(frozen=True)
class GraphBreakFacts(RowFactsBase):
    """Graph-break sites (in the user's code and installed libraries) against the baseline:
    the sites this run has and the baseline had not (`new`), those it no longer has
    (`gone`; a site that only moved lines is in neither), the allowed number of new sites,
    and how many sites each side has."""

    kind: ClassVar[str] = "graph_breaks"
    new: tuple[BreakAt, ...]
    gone: tuple[BreakAt, ...]
    allowed_new: float
    sites_before: int
    sites_now: int


@dataclass(frozen=True)
class CountFacts(RowFactsBase):
    """A count where more is worse, before and after, and the increase the policy allows."""

    before: int
    after: int
    allowed_increase: float


@dataclass(frozen=True)
class RecompileAt:
    """A recompile as the document records it: the function, where, and the guard that
    failed (torch's text)."""

    function: str
    file: str
    line: int | None
    reason: RecompileReason | str


@dataclass(frozen=True)
class RecompileFacts(CountFacts):
    """Recompiles: the counts, the recompiles this run has and the baseline had not (`new`,
    in the run's order), and whether the recompile limit is hit now and was not before (the
    frame then runs eagerly)."""

    kind: ClassVar[str] = "recompiles"
    new: tuple[RecompileAt, ...] = ()
    limit_newly_hit: bool = False


@dataclass(frozen=True)
class FallbackAt:
    """A frame that fell back to eager, as the document records it (results/model.py
    Fallback): its function and file, the kind's code, the break's line and type."""

    file: str
    kind: str
    function: str | None = None
    line: int | None = None
    type: str | None = None

    @classmethod
    def of(cls, fallback: Fallback) -> FallbackAt:
        return cls(
            fallback.file, fallback.kind.value, fallback.function, fallback.line, fallback.type
        )


@dataclass(frozen=True)
class FallbackFacts(CountFacts):
    """Frames that fell back to eager: the counts, and why each frame of this run did: as
    facts (`fallbacks`, and the recompile `limit` one may name), or, for a document from
    before they were recorded, in the run's words (the variant's `fallback_reasons`)."""

    kind: ClassVar[str] = "fallbacks_to_eager"
    reasons: tuple[str, ...] = ()
    fallbacks: tuple[FallbackAt, ...] | None = None
    limit: RecompileLimit | None = None

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()  # an older document's facts: as they were written before
        return {k: v for k, v in out.items() if v is not None or k not in ("fallbacks", "limit")}


@dataclass(frozen=True)
class DdpSplitFacts(CountFacts):
    """Where DDP's optimizer split a distributed step's compiled graphs (the variant's
    `distributed.ddp_splits`): the counts. Not graph breaks: DDP asks for them."""

    kind: ClassVar[str] = "ddp_splits"


def judge(sides: Sides) -> list[MetricVerdict]:
    base, cur = sides.pair
    if not isinstance(base, Variant) or not isinstance(cur, Variant):
        return []  # eager has no diagnostics of its own
    thresholds = sides.policy.thresholds
    rows = [
        judge_recompiles(
            sides.subject, base.recompiles, cur.recompiles, thresholds["recompiles_increase"]
        ),
        judge_graph_breaks(
            sides.subject,
            base.graph_breaks,
            cur.graph_breaks,
            thresholds["graph_break_sites_increase"],
        ),
        judge_fallbacks(sides.subject, base, cur, thresholds["fallbacks_increase"]),
        judge_ddp_splits(sides.subject, base, cur, thresholds["ddp_splits_increase"]),
    ]
    return [_explain_missing(row, cur) for row in rows if row is not None]


def _explain_missing(row: MetricVerdict, cur: Variant) -> MetricVerdict:
    """A diagnostic metric this run lacks: add why, when the variant says (`degraded`)."""
    key = DIAGNOSTIC_METRICS.get(row.metric)
    if row.verdict != "missing" or key is None or getattr(cur, key) is not None:
        return row
    cause = diagnostics_doubt(cur)
    if cause is None:
        return row
    if not isinstance(row.facts, MissingFacts):
        return row
    return dataclasses.replace(row, facts=dataclasses.replace(row.facts, cause=cause))


def judge_recompiles(
    subject: Subject, base: Recompiles | None, cur: Recompiles | None, allowed_increase: float
) -> MetricVerdict | None:
    before = base.count if base is not None else None
    after = cur.count if cur is not None else None
    unjudged = missing(subject, "recompiles", before, after)
    if unjudged is not None or before is None or after is None:
        return unjudged
    facts = RecompileFacts(
        before,
        after,
        allowed_increase,
        new=tuple(new_recompiles(base, cur)),
        limit_newly_hit=bool(cur is not None and cur.limit_hit)
        and not (base is not None and base.limit_hit),
    )
    return judge_count(subject, "recompiles", facts)


def judge_fallbacks(
    subject: Subject, base: Variant, cur: Variant, allowed_increase: float
) -> MetricVerdict | None:
    before, after = base.fallbacks_to_eager, cur.fallbacks_to_eager
    unjudged = missing(subject, "fallbacks_to_eager", before, after)
    if unjudged is not None or before is None or after is None:
        return unjudged
    facts = FallbackFacts(
        before,
        after,
        allowed_increase,
        reasons=cur.fallback_reasons or (),
        fallbacks=(
            tuple(FallbackAt.of(fallback) for fallback in cur.fallbacks)
            if cur.fallbacks is not None
            else None
        ),
        limit=cur.recompiles.limit if cur.recompiles is not None else None,
    )
    return judge_count(subject, "fallbacks_to_eager", facts)


def judge_ddp_splits(
    subject: Subject, base: Variant, cur: Variant, allowed_increase: float
) -> MetricVerdict | None:
    """None for a one-process step (no row); `missing` when one side's DDP splits were not
    counted (a torch without Dynamo's DDP optimizer)."""
    if base.distributed is None or cur.distributed is None:
        return None
    before, after = base.distributed.ddp_splits, cur.distributed.ddp_splits
    unjudged = missing(subject, "ddp_splits", before, after)
    if unjudged is not None or before is None or after is None:
        return unjudged
    return judge_count(subject, "ddp_splits", DdpSplitFacts(before, after, allowed_increase))


def judge_count(subject: Subject, metric: str, facts: CountFacts) -> MetricVerdict:
    """A count where more is worse (recompiles, fallbacks to eager): a regression past the
    allowed increase, an improvement when it fell."""
    increase = facts.after - facts.before
    if increase > facts.allowed_increase:
        verdict = Verdict.REGRESSION
    elif increase < 0:
        verdict = Verdict.IMPROVEMENT
    else:
        verdict = Verdict.PASS
    return subject.measured(
        metric,
        verdict,
        (facts.before, facts.after),
        "count",
        float(increase),
        facts.allowed_increase,
        facts=facts,
    )


def judge_graph_breaks(
    subject: Subject,
    base_gb: GraphBreaks | None,
    cur_gb: GraphBreaks | None,
    allowed_new: float,
) -> MetricVerdict | None:
    """New sites (by file and line) are named; a site that only moved lines is not new.

    Breaks in the user's code and in installed libraries are judged; torch's own internal
    breaks (origin "torch", e.g. the optimizer's graph_break()) are listed, not gated.
    """
    unjudged = missing(subject, "graph_break_sites", base_gb, cur_gb, numeric=False)
    if unjudged is not None or base_gb is None or cur_gb is None:
        return unjudged
    base_sites = gated_sites(base_gb.sites)
    cur_sites = gated_sites(cur_gb.sites)
    new, gone = diff_graph_break_sites(base_sites, cur_sites)
    if new:
        verdict = Verdict.REGRESSION if len(new) > allowed_new else Verdict.PASS
        change = float(len(new))
    elif gone:
        verdict, change = Verdict.IMPROVEMENT, float(-len(gone))
    else:
        verdict, change = Verdict.PASS, 0.0
    facts = GraphBreakFacts(
        new=tuple(map(BreakAt.of, new)),
        gone=tuple(map(BreakAt.of, gone)),
        allowed_new=allowed_new,
        sites_before=len(base_sites),
        sites_now=len(cur_sites),
    )
    values = (len(base_sites), len(cur_sites))
    return subject.measured(
        "graph_break_sites", verdict, values, "count", change, allowed_new, facts=facts
    )


def diff_graph_break_sites(
    base_sites: Iterable[BreakSite], cur_sites: Iterable[BreakSite]
) -> tuple[list[BreakSite], list[BreakSite]]:
    """(new sites, gone sites), keyed by (file, line), and by the cause's (file, line) too when
    both sides record causes (two breaks can split a graph at the same call).

    A break that moved (same file and reason, gone from one line, new at another) is the same
    break: an edit above it must not be reported as a new graph break.
    """
    base_sites, cur_sites = list(base_sites), list(cur_sites)
    with_cause = all(s.cause is not None for s in [*base_sites, *cur_sites])
    base_unique = _unique_sites(base_sites, with_cause)
    cur_unique = _unique_sites(cur_sites, with_cause)
    new = [s for key, s in cur_unique.items() if key not in base_unique]
    gone = [s for key, s in base_unique.items() if key not in cur_unique]
    really_new = []
    for site in new:
        same = (site.file, site.reason)
        moved = next((g for g in gone if (g.file, g.reason) == same), None)
        if moved is None:
            really_new.append(site)
        else:
            gone.remove(moved)
    return really_new, gone


def new_recompiles(base: Recompiles | None, cur: Recompiles | None) -> list[RecompileAt]:
    """The recompiles this run has and the baseline had not, in the run's order."""
    known = {_event_key(e) for e in (base.events if base is not None else ())}
    events = cur.events if cur is not None else ()
    return [
        RecompileAt(e.function, e.file, e.line, e.reason)
        for e in events
        if _event_key(e) not in known
    ]


def gated_sites(sites: Iterable[BreakSite]) -> list[BreakSite]:
    """Sites in the user's code or an installed library (documents before `origin` was
    recorded: every site, as then)."""
    return [s for s in sites if (s.origin or "repo") in ("repo", "library")]


def _unique_sites(sites: Iterable[BreakSite], with_cause: bool) -> dict[tuple[Any, ...], BreakSite]:
    unique: dict[tuple[Any, ...], BreakSite] = {}
    for site in sites:
        key: tuple[Any, ...] = (site.file, site.line)
        if with_cause and site.cause is not None:
            key += (site.cause.file, site.cause.line)
        unique.setdefault(key, site)
    return unique


def _event_key(event: RecompileEvent) -> tuple[Any, ...]:
    return (event.function, event.file, event.line, _OLD_REASONS.get(event.reason, event.reason))


# The old documents' reader: before issue 53's last items the child wrote these reasons as
# sentences; the same recompile in a newer document has the code (matched as one event).
_OLD_REASONS: dict[RecompileReason | str, RecompileReason] = {
    "no guard failure was logged (torch <= 2.4 compiles each instance of a module class "
    "separately)": RecompileReason.NO_GUARD_FAILURE_LOGGED,
    "unknown guard failure": RecompileReason.UNKNOWN_GUARD_FAILURE,
}
