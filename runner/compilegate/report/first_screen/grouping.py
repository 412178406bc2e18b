"""Which gate rows the first screen says together.

attention_rows   every failing and inconclusive row (and every passing one whose exact
                 counts moved), most severe first; a row that reads the same on several
                 versions said once with its versions, then one alike on several
                 variants of a step said once with its variants
reasons_of       why each failing code metric failed, said once for the versions and
                 the variants where it failed alike: where the facts its words are
                 composed from are the same (first_screen/said.py)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ...gate.row_facts_base import RowFactsBase
from ...gate.run_set import RunSetVerdict, VersionOutcome
from ...gate.verdict import SEVERITY_ORDER, MetricVerdict, Verdict, sorted_by_severity
from .. import wording as w
from ..links import LinkContext
from ..row_cells import row_cells
from ..row_words.diagnostics import break_reasons_said, count_detail, new_break_site
from ..row_words.looks import needs_a_look
from ..row_words.past_limit import PastLimit
from ..row_words.sentence import RowSentence
from ..row_words.worded import WordedRows
from ..wording import and_list as _and
from .model import AttentionRow, Reason
from .said import (
    DETAIL_METRICS,
    RUN_METRICS,
    SaidFacts,
    counts_text,
    reason_sentence,
    said_facts,
    says_more,
)
from .versions import version_label as _version_label


def attention_rows(run_set: RunSetVerdict, worded: WordedRows) -> tuple[AttentionRow, ...]:
    """Every failing and inconclusive row, most severe first; a row that reads the same on
    several versions (same place, metric, values, change, limit and noise) said once, its
    versions together; then one that reads the same on several variants of a step (on the
    same versions) said once, its variants together: `gpt · default; default, dynamic`."""
    versions_of: dict[tuple[Verdict, tuple[str, ...]], list[str]] = {}
    place_of: dict[tuple[Verdict, tuple[str, ...]], tuple[str, str | None]] = {}
    for version in run_set.versions:
        if version.verdict is None:
            continue
        for row in sorted_by_severity(version.verdict.verdicts):
            said = worded.of(row)
            if needs_a_look(row, said):
                key = (row.verdict, row_cells(version, row, said, False))
                versions_of.setdefault(key, []).append(_version_label(version))
                place_of.setdefault(key, (row.step, row.variant))
    variants_of: dict[tuple[Verdict, str, bool, str, tuple[str, ...]], list[str | None]] = {}
    for key, labels in versions_of.items():
        (verdict, cells), (step, variant) = key, place_of[key]
        alike = (verdict, step, variant is None, ", ".join(labels), cells[1:])
        variants_of.setdefault(alike, []).append(variant)
    merged = [
        AttentionRow(verdict, labels, step, _variant_names(variants), cells)
        for (verdict, step, _, labels, cells), variants in variants_of.items()
    ]
    # Most severe first; rows about the same place and metric next to each other.
    first_seen = {(r.place, r.cells[0]): i for i, r in reversed(list(enumerate(merged)))}
    return tuple(
        sorted(
            merged,
            key=lambda r: (SEVERITY_ORDER.index(r.verdict), first_seen[(r.place, r.cells[0])]),
        )
    )


def _variant_names(variants: Sequence[str | None]) -> str | None:
    """`default; default, dynamic` (a variant's name may hold a comma, so the names are
    parted by semicolons); None for a row about the whole step."""
    if list(variants) == [None]:
        return None
    return "; ".join(w.variant_name(v) for v in variants)


def _place(step: str, variants: Sequence[str | None]) -> str:
    """`gpt`, `gpt · default`, `gpt · default; default, dynamic`."""
    names = _variant_names(variants)
    return step if names is None else f"{step} · {names}"


class _Said(NamedTuple):
    """A failing row's reason as one version says it: where, which metric, and the facts
    its words are composed from (first_screen/said.py)."""

    subject: str
    metric: str
    facts: SaidFacts


@dataclass
class _Seen:
    """A reason and what the versions that said it share (the first one's row)."""

    versions: list[str]
    step: str
    variant: str | None
    verdict: Verdict
    facts: RowFactsBase
    sentence: RowSentence  # its words
    url: str | None  # the link of a new graph break's place
    past: PastLimit | None  # compile work: the counts past the limit


class _Alike(NamedTuple):
    """Reasons that say the same facts on several variants of a step, on the same
    versions."""

    step: str
    whole_step: bool
    metric: str
    facts: SaidFacts
    versions: tuple[str, ...]


@dataclass(frozen=True)
class _Group:
    """The reasons said as one, and their words."""

    saids: list[_Said]
    sentence: RowSentence


def reasons_of(
    run_set: RunSetVerdict, worded: WordedRows, links: LinkContext, several: bool
) -> list[Reason]:
    """Why each failing code metric failed (REASON_METRICS), said once for the versions
    and the variants of a step where it failed alike (the same facts); a new graph break's
    file:line linked to the head commit. A count's reason says only the new event's detail
    (the table gives the count), and leaves out torch's words already said by another
    reason (a fallback's graph break)."""
    seen: dict[_Said, _Seen] = {}
    # Where the table's rows of each kind are: a reason covering all of them needs no place.
    places_of: dict[str, set[tuple[str, str | None]]] = {}
    for version in run_set.versions:
        if version.verdict is None:
            continue
        for row in sorted_by_severity(version.verdict.verdicts):
            row_said = worded.of(row)
            if not needs_a_look(row, row_said):
                continue
            places_of.setdefault(_reason_what(row.metric, row.verdict), set()).add(
                (row.step, row.variant)
            )
            if not says_more(row):
                continue
            said = _Said(w.row_subject(row), row.metric, said_facts(row, row_said))
            if said in seen:
                seen[said].versions.append(_version_label(version))
                continue
            seen[said] = _Seen(
                [_version_label(version)],
                row.step,
                row.variant,
                row.verdict,
                row.facts,
                reason_sentence(row, row_said),
                _break_url(version, row, links),
                row_said.past_limit,
            )
    variants_of: dict[_Alike, _Group] = {}
    for said, found in seen.items():
        alike = _Alike(
            found.step, found.variant is None, said.metric, said.facts, tuple(found.versions)
        )
        variants_of.setdefault(alike, _Group([], found.sentence)).saids.append(said)
    variants_of = _merge_compile_work(variants_of, seen)
    whats = [
        _reason_what(a.metric, seen[group.saids[0]].verdict) for a, group in variants_of.items()
    ]
    reasons = []
    for alike, group in variants_of.items():
        first = seen[group.saids[0]]
        variants = [seen[said].variant for said in group.saids]
        what = _reason_what(alike.metric, first.verdict)
        covered = {(alike.step, variant) for variant in variants}
        alone = whats.count(what) == 1 and covered == places_of.get(what)
        # the only reason of its kind, about every row of that kind: the rows say where
        place = "" if alone else _place(alike.step, variants)
        versions = f"torch {_and(alike.versions)}" if several else ""
        reason = Reason(place, what, versions, group.sentence, first.url, first.facts)
        reasons.append((alike.metric, reason))
    # One metric's reasons together (compile work on each variant), in the table's order.
    metrics = list(dict.fromkeys(metric for metric, _ in reasons))
    reasons.sort(key=lambda found: metrics.index(found[0]))
    return _without_repeats(reasons)


def _reason_what(metric: str, verdict: Verdict) -> str:
    """What a reason is about, in bold before it: the metric, or how a run failed."""
    return w.verdict_word(verdict) if metric in RUN_METRICS else w.metric_name(metric)


def _merge_compile_work(
    variants_of: dict[_Alike, _Group], seen: dict[_Said, _Seen]
) -> dict[_Alike, _Group]:
    """Compile work past the limit on several variants of a step (same versions, the same
    facts after the counts), with some counts alike: one reason, in the first one's place,
    the counts alike said once and each variant's others named (`graphs 1 → 5, compile
    records 1 → 6 (backward compile records 1 → 5 on default)`)."""
    groups: dict[tuple[str, PastLimit, tuple[str, ...]], list[tuple[_Alike, PastLimit]]] = {}
    for alike, group in variants_of.items():
        first = seen[group.saids[0]]
        if first.past is not None and first.variant is not None:
            same = (alike.step, dataclasses.replace(first.past, counts=()), alike.versions)
            groups.setdefault(same, []).append((alike, first.past))
    merged: dict[_Alike, tuple[RowSentence, list[_Alike]]] = {}
    for members_past in groups.values():
        members = [alike for alike, _ in members_past]
        counts = [past.counts for _, past in members_past]
        common = [count for count in counts[0] if all(count in other for other in counts[1:])]
        if len(members) < 2 or not common:
            continue
        others = []
        for alike, own in zip(members, counts, strict=True):
            extra = [count for count in own if count not in common]
            if extra:
                names = "; ".join(w.variant_name(seen[s].variant) for s in variants_of[alike].saids)
                others.append(f"{counts_text(extra)} on {names}")
        said = counts_text(common) + (f" ({'; '.join(others)})" if others else "")
        merged[members[0]] = (RowSentence("", f"{said}{members_past[0][1].why}"), members)
    gone = {alike for _, members in merged.values() for alike in members}
    out: dict[_Alike, _Group] = {}
    for alike, group in variants_of.items():
        if alike in merged:
            sentence, members = merged[alike]
            out[alike] = _Group([s for m in members for s in variants_of[m].saids], sentence)
        elif alike not in gone:
            out[alike] = group
    return out


def _without_repeats(reasons: list[tuple[str, Reason]]) -> list[Reason]:
    """A fallback's or recompile's parenthesised words (torch's, in the run's fallback
    reason or failed guard) left out where a graph break's reason already quotes them
    (`… at model.py:72 (Unsupported Tensor.item() call …)`)."""
    said = [
        text
        for metric, reason in reasons
        if metric == "graph_break_sites"
        for text in break_reasons_said(reason.facts)
    ]
    kept = []
    for metric, reason in reasons:
        if metric in DETAIL_METRICS and said:
            clauses = count_detail(reason.facts, lambda text: _drop_said(text, said), said)
            reason = dataclasses.replace(reason, sentence=RowSentence("", "; ".join(clauses)))
        kept.append(reason)
    return kept


def _drop_said(message: str, said: Sequence[str]) -> str:
    """`message` less each ` (…)` whose words (parentheses inside them kept whole: torch's
    `Tensor.item()`) are in one of `said`. The message is the document's (a failed guard,
    torch's text; or the old documents' reader: a fallback reason an older document recorded
    as a sentence; one recorded as facts leaves its type out from them, degraded_notes.py),
    and so are the words it is searched for (torch's graph-break reasons)."""
    start = message.find(" (")
    while start != -1:
        depth, end = 0, None
        for index in range(start + 1, len(message)):
            depth += {"(": 1, ")": -1}.get(message[index], 0)
            if depth == 0:
                end = index
                break
        if end is not None and any(message[start + 2 : end] in text for text in said):
            message = message[:start] + message[end + 1 :]
            start = message.find(" (", start)
        else:
            start = message.find(" (", start + 1)
    return message


def _break_url(version: VersionOutcome, row: MetricVerdict, links: LinkContext) -> str | None:
    """The URL at the head commit of the place of a new graph break in the repository (the
    reason's site, row_words/sentence.py); None for another row, or a site elsewhere."""
    found = new_break_site(row)
    if found is None or found.line is None:
        return None
    for step in version.document.steps if version.document is not None else ():
        for variant in step.variants:
            for site in variant.graph_breaks.sites if variant.graph_breaks is not None else ():
                if (site.file, site.line) == (found.file, found.line) and site.in_repository:
                    return links.blob_url(found.file, found.line)
    return None
