"""Diagnostics: recompiles, graph-break sites and fallbacks to eager, each against the
allowed increase in the baseline's policy.

    metric              direction          threshold (config.DEFAULT_THRESHOLDS)
    recompiles          fewer is better    recompiles_increase: allowed increase
    graph_break_sites   fewer is better    graph_break_sites_increase: new sites, named
    fallbacks_to_eager  fewer is better    fallbacks_increase: allowed increase

A diagnostic this run lacks is `missing`, with the reason when the variant says (its
`degraded` list, e.g. "compile diagnostics failed: ...").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ...results.model import (
    BreakCause,
    BreakSite,
    GraphBreaks,
    RecompileEvent,
    Recompiles,
    Variant,
)
from ..rules import MissingFacts, Subject, missing
from ..verdict import MetricVerdict
from .sides import Sides

# Variant metrics the compile diagnostics produce, and their keys.
DIAGNOSTIC_METRICS = {
    "recompiles": "recompiles",
    "graph_break_sites": "graph_breaks",
    "fallbacks_to_eager": "fallbacks_to_eager",
}


def judge(sides: Sides) -> list[MetricVerdict]:
    base, cur = sides.pair
    if not isinstance(base, Variant) or not isinstance(cur, Variant):
        return []  # eager has no diagnostics of its own
    thresholds = sides.policy.thresholds
    rows = [
        judge_count(
            sides.subject,
            "recompiles",
            "recompiles",
            base.recompiles.count if base.recompiles is not None else None,
            cur.recompiles.count if cur.recompiles is not None else None,
            thresholds["recompiles_increase"],
            recompile_detail(base.recompiles, cur.recompiles),
        ),
        judge_graph_breaks(
            sides.subject,
            base.graph_breaks,
            cur.graph_breaks,
            thresholds["graph_break_sites_increase"],
        ),
        judge_count(
            sides.subject,
            "fallbacks_to_eager",
            "fallbacks to eager",
            base.fallbacks_to_eager,
            cur.fallbacks_to_eager,
            thresholds["fallbacks_increase"],
            "".join(f"; {r}" for r in (cur.fallback_reasons or ())[:1]),
        ),
    ]
    return [_explain_missing(row, cur) for row in rows if row is not None]


def _explain_missing(row: MetricVerdict, cur: Variant) -> MetricVerdict:
    """A diagnostic metric this run lacks: add why, when the variant says (`degraded`)."""
    key = DIAGNOSTIC_METRICS.get(row.metric)
    if row.verdict != "missing" or key is None or getattr(cur, key) is not None:
        return row
    failures = [reason for reason in cur.degraded or () if "diagnostics" in reason]
    if not failures:
        return row
    if not isinstance(row.facts, MissingFacts):
        return row
    return dataclasses.replace(row, facts=dataclasses.replace(row.facts, cause=failures[0]))


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
    unjudged = missing(subject, metric, base, cur)
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
        verdict = "regression" if len(new) > allowed_new else "pass"
        message = f"new graph break at {break_name(new[0])}: {new[0].reason}"
        if len(new) > 1:
            message += f"; and {len(new) - 1} more: " + ", ".join(map(site_name, new[1:4]))
        if verdict == "pass":
            message += f" (within the allowed {allowed_new:g} new sites)"
        change = float(len(new))
    elif gone:
        verdict, change = "improvement", float(-len(gone))
        message = "graph break gone: " + ", ".join(f"{site_name(s)} ({s.reason})" for s in gone[:3])
    else:
        verdict, change = "pass", 0.0
        message = f"no new graph-break sites ({len(cur_sites)} as before)"
    values = (len(base_sites), len(cur_sites))
    return subject.measured(
        "graph_break_sites", verdict, message, values, "count", change, allowed_new
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


def recompile_detail(base: Recompiles | None, cur: Recompiles | None) -> str:
    """The first recompile this run has and the baseline had not, and a newly hit limit."""
    known = {_event_key(e) for e in (base.events if base is not None else ())}
    new = [e for e in (cur.events if cur is not None else ()) if _event_key(e) not in known]
    detail = ""
    if new:
        event = new[0]
        where = f"{event.file}:{event.line}" if event.line is not None else event.file
        detail = f"; new: {event.function} at {where}: {event.reason}"
    if cur is not None and cur.limit_hit and not (base is not None and base.limit_hit):
        detail += "; the recompile limit was hit: that frame now runs eagerly"
    return detail


def gated_sites(sites: Iterable[BreakSite]) -> list[BreakSite]:
    """Sites in the user's code or an installed library (documents before `origin` was
    recorded: every site, as then)."""
    return [s for s in sites if (s.origin or "repo") in ("repo", "library")]


def break_name(site: BreakSite) -> str:
    """`model.py:42`, with the cause when it is elsewhere: `model.py:42 (cause: util.py:7)`."""
    cause = site.cause
    if cause is None or (cause.file, cause.line) == (site.file, site.line):
        return site_name(site)
    return f"{site_name(site)} (cause: {site_name(cause)})"


def site_name(site: BreakSite | BreakCause) -> str:
    """`model.py:42`, or the file alone when the line is unknown."""
    return f"{site.file}:{site.line}" if site.line is not None else site.file


def _unique_sites(sites: Iterable[BreakSite], with_cause: bool) -> dict[tuple[Any, ...], BreakSite]:
    unique: dict[tuple[Any, ...], BreakSite] = {}
    for site in sites:
        key: tuple[Any, ...] = (site.file, site.line)
        if with_cause and site.cause is not None:
            key += (site.cause.file, site.cause.line)
        unique.setdefault(key, site)
    return unique


def _event_key(event: RecompileEvent) -> tuple[Any, ...]:
    return (event.function, event.file, event.line, event.reason)
