"""The words of why a compile degraded, from the facts the child records (issue 53: facts
travel, sentences never do): each graph-break site in the user's code or an installed
library, each frame that fell back to eager (`fallbacks`), the frames torch gave no reason
for, the recompile limit. A document from before the facts were recorded (no `fallbacks`)
is said as it recorded its sentences (`degraded`, `fallback_reasons`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..break_type import break_type
from ..gate.judges.diagnostics import FallbackAt, FallbackFacts
from ..results.model import (
    DEGRADING_ORIGINS,
    BreakSite,
    FallbackKind,
    RecompileLimit,
    Variant,
)

SITES_NAMED = 3
# Where the graph breaks of each origin that degrades the compile are said to be.
ORIGINS_SAID = tuple(zip(DEGRADING_ORIGINS, ("in your code", "in installed libraries")))
LINED = frozenset({FallbackKind.GRAPH_BREAK, FallbackKind.LOOP})  # a fallback at a break's line


def fallback_reasons(variant: Variant) -> tuple[str, ...]:
    """One sentence per frame that fell back to eager: worded from the facts, or as an older
    document recorded them."""
    if variant.fallbacks is None:
        return tuple(variant.fallback_reasons or ())
    limit = variant.recompiles.limit if variant.recompiles is not None else None
    return tuple(fallback_words(FallbackAt.of(fallback), limit) for fallback in variant.fallbacks)


def fallback_reasons_of(facts: FallbackFacts) -> tuple[str, ...]:
    """A fallbacks row's reasons: worded from its facts, or as an older document recorded
    them."""
    if facts.fallbacks is None:
        return facts.reasons
    return tuple(fallback_words(fallback, facts.limit) for fallback in facts.fallbacks)


def fallback_words(
    fallback: FallbackAt, limit: RecompileLimit | None, said_elsewhere: Sequence[str] = ()
) -> str:
    """`forward in model.py fell back to eager: graph break in a loop at model.py:30 (…)`;
    the break's type (or the limit's setting) left out where one of `said_elsewhere` (the
    first screen's graph-break reasons) quotes it already."""
    return f"{fallback.function or 'a frame'} in {fallback.file} fell back to eager: " + (
        _why_words(fallback, limit, said_elsewhere)
    )


def _why_words(
    fallback: FallbackAt, limit: RecompileLimit | None, said_elsewhere: Sequence[str]
) -> str:
    where = f"{fallback.file}:{fallback.line}"
    kind = FallbackKind(fallback.kind)
    type_said = fallback.type or ""
    quoted = any(type_said in text for text in said_elsewhere)
    if kind is FallbackKind.GRAPH_BREAK:
        return f"graph break at {where}" + ("" if quoted else f" ({type_said})")
    if kind is FallbackKind.LOOP:
        return f"graph break in a loop at {where}" + (
            f" ({type_said})" if type_said and not quoted else ""
        )
    if kind is FallbackKind.LIMIT and limit is not None:
        setting = f"config.{limit.name} = {limit.value}"
        quoted = any(setting in text for text in said_elsewhere)
        return "recompile limit hit" + ("" if quoted else f" ({setting})")
    return type_said


def limit_words(limit: RecompileLimit) -> str:
    """`recompile limit hit: forward (model.py:20) runs eagerly from now on (config.… = 8;
    last reason: …)`."""
    where = f"{limit.function} ({limit.file}:{limit.line}) " if limit.function else ""
    last = f"; last reason: {limit.reason}" if limit.reason else ""
    return (
        f"recompile limit hit: {where}runs eagerly from now on "
        f"(config.{limit.name} = {limit.value}{last})"
    )


@dataclass(frozen=True)
class PlacedNote:
    """A degraded note and the places (`model.py:42`) it names: where the report's reasons
    name them all already, the note is left to them (run_text.py). `places` is None for an
    older document's note: found in its text (recorded_places)."""

    text: str
    places: tuple[str, ...] | None


def degraded_notes(variant: Variant) -> tuple[str, ...]:
    """Why the compile degraded, one note each: worded from the facts, or as an older
    document recorded them (`degraded`)."""
    return tuple(note.text for note in placed_notes(variant))


def placed_notes(variant: Variant) -> tuple[PlacedNote, ...]:
    """degraded_notes, each with the places it names."""
    if variant.fallbacks is None:
        return tuple(PlacedNote(note, None) for note in variant.degraded or ())
    notes = list(break_notes(variant))
    recompiles = variant.recompiles
    limit = recompiles.limit if recompiles is not None and recompiles.limit_hit else None
    for fallback in variant.fallbacks:
        if limit is None or fallback.kind is not FallbackKind.LIMIT:
            at = FallbackAt.of(fallback)
            named = _place(at.file, at.line) if fallback.kind in LINED else ()
            notes.append(PlacedNote(fallback_words(at, limit), named))
    unexplained = (variant.fallbacks_to_eager or 0) - len(variant.fallbacks)
    if unexplained > 0:
        notes.append(
            PlacedNote(f"{unexplained} frame(s) fell back to eager (torch gave no reason)", ())
        )
    if limit is not None:
        named = _place(limit.file, limit.line) if limit.function else ()
        notes.append(PlacedNote(limit_words(limit), named))
    return tuple(notes)


def break_notes(variant: Variant) -> tuple[PlacedNote, ...]:
    """`2 graph breaks in your code (model.py:42 print; …)`, then those in libraries."""
    sites = variant.graph_breaks.sites if variant.graph_breaks is not None else ()
    notes = []
    for origin, where in ORIGINS_SAID:
        mine = [site for site in sites if site.origin == origin]
        if mine:
            named = mine[:SITES_NAMED]
            shown = "; ".join(site_note(site) for site in named)
            more = f"; and {len(mine) - SITES_NAMED} more" if len(mine) > SITES_NAMED else ""
            plural = "s" if len(mine) != 1 else ""
            places = tuple(place for site in named for place in _site_places(site))
            notes.append(
                PlacedNote(f"{len(mine)} graph break{plural} {where} ({shown}{more})", places)
            )
    return tuple(notes)


def site_note(site: BreakSite) -> str:
    """`model.py:42 print`, or `model.py:42 -> helpers.py:7 print` when the cause is deeper."""
    where = f"{site.file}:{site.line}"
    if _deeper(site):
        assert site.cause is not None
        where += f" -> {site.cause.file}:{site.cause.line}"
    return f"{where} {break_type(site.reason)}"


def _deeper(site: BreakSite) -> bool:
    cause = site.cause
    return cause is not None and (cause.file, cause.line) != (site.file, site.line)


def _site_places(site: BreakSite) -> tuple[str, ...]:
    places = _place(site.file, site.line)
    if _deeper(site) and site.cause is not None:
        places += _place(site.cause.file, site.cause.line)
    return places


def _place(file: str | None, line: int | None) -> tuple[str, ...]:
    """`model.py:42`, for a Python file at a known line (what the report's reasons name)."""
    return (f"{file}:{line}",) if file and file.endswith(".py") and line is not None else ()


# An older document's note names its places in its text (the child composed it).
_RECORDED_PLACE = re.compile(r"[\w./-]+\.py:\d+")


def recorded_places(note: str) -> tuple[str, ...]:
    """The places (`model.py:42`) an older document's note names: the old documents' reader,
    for a note the child wrote as a sentence (or a failed pass's or refusal's words)."""
    return tuple(_RECORDED_PLACE.findall(note))
