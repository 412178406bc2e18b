"""Which gate rows the first screen says together, and why they failed.

attention_rows   every failing and inconclusive row (and every passing one whose exact
                 counts moved), most severe first; a row alike on several versions said
                 once with its versions, then one alike on several variants of a step
                 said once with its variants
reasons_of       why each failing code metric failed, said once for the versions and
                 variants where it failed alike
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
from ..escape import shortened
from ..links import LinkContext
from ..row_cells import row_cells
from ..row_words import row_message
from ..row_words.compile_cost import CountMoved, PastLimit, counts_past_limit
from ..row_words.cuda_graphs import cuda_graph_detail
from ..row_words.diagnostics import break_reasons_said, count_detail, new_break_site
from ..row_words.looks import needs_a_look
from ..row_words.numerics_reference import of_row as numerics_without_reference
from ..wording import and_list as _and
from .model import AttentionRow, Reason
from .versions import version_label as _version_label

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


def attention_rows(run_set: RunSetVerdict) -> tuple[AttentionRow, ...]:
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
            if needs_a_look(row):
                key = (row.verdict, row_cells(version, row, False, why_below=True))
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
    """A failing row's reason as one version says it: where, which metric, its words."""

    subject: str
    metric: str
    message: str


@dataclass
class _Seen:
    """A reason and what the versions that said it share (the first one's row)."""

    versions: list[str]
    step: str
    variant: str | None
    verdict: Verdict
    facts: RowFactsBase
    site: tuple[str | None, str | None]  # (file:line, its link)
    past: PastLimit | None  # compile work: the counts past the limit


class _Alike(NamedTuple):
    """Reasons that read the same on several variants of a step, on the same versions."""

    step: str
    whole_step: bool
    metric: str
    message: str
    versions: tuple[str, ...]


def reasons_of(run_set: RunSetVerdict, links: LinkContext, several: bool) -> list[Reason]:
    """Why each failing code metric failed (REASON_METRICS), said once for the versions
    and the variants of a step where it failed alike (the same message); a new graph
    break's file:line linked to the head commit. A count's reason says only the new
    event's detail (the table gives the count), and leaves out torch's words already said
    by another reason (a fallback's graph break)."""
    seen: dict[_Said, _Seen] = {}
    # Where the table's rows of each kind are: a reason covering all of them needs no place.
    places_of: dict[str, set[tuple[str, str | None]]] = {}
    for version in run_set.versions:
        if version.verdict is None:
            continue
        for row in sorted_by_severity(version.verdict.verdicts):
            if needs_a_look(row):
                places_of.setdefault(_reason_what(row.metric, row.verdict), set()).add(
                    (row.step, row.variant)
                )
            if not needs_a_look(row) or not _says_more(row):
                continue
            said = _Said(w.row_subject(row), row.metric, _reason_message(row))
            if said in seen:
                seen[said].versions.append(_version_label(version))
                continue
            seen[said] = _Seen(
                [_version_label(version)],
                row.step,
                row.variant,
                row.verdict,
                row.facts,
                _break_site(version, row, links),
                counts_past_limit(row),
            )
    variants_of: dict[_Alike, list[_Said]] = {}
    for said, found in seen.items():
        alike = _Alike(
            found.step, found.variant is None, said.metric, said.message, tuple(found.versions)
        )
        variants_of.setdefault(alike, []).append(said)
    variants_of = _merge_compile_work(variants_of, seen)
    whats = [_reason_what(a.metric, seen[saids[0]].verdict) for a, saids in variants_of.items()]
    reasons = []
    for alike, saids in variants_of.items():
        first = seen[saids[0]]
        variants = [seen[said].variant for said in saids]
        what = _reason_what(alike.metric, first.verdict)
        covered = {(alike.step, variant) for variant in variants}
        alone = whats.count(what) == 1 and covered == places_of.get(what)
        # the only reason of its kind, about every row of that kind: the rows say where
        place = "" if alone else _place(alike.step, variants)
        versions = f"torch {_and(alike.versions)}" if several else ""
        site, url = first.site
        reasons.append(
            (alike.metric, Reason(place, what, versions, alike.message, site, url, first.facts))
        )
    # One metric's reasons together (compile work on each variant), in the table's order.
    metrics = list(dict.fromkeys(metric for metric, _ in reasons))
    reasons.sort(key=lambda found: metrics.index(found[0]))
    return _without_repeats(reasons)


def _reason_what(metric: str, verdict: Verdict) -> str:
    """What a reason is about, in bold before it: the metric, or how a run failed."""
    return w.verdict_word(verdict) if metric in RUN_METRICS else w.metric_name(metric)


def _merge_compile_work(
    variants_of: dict[_Alike, list[_Said]], seen: dict[_Said, _Seen]
) -> dict[_Alike, list[_Said]]:
    """Compile work past the limit on several variants of a step (same versions), with some
    counts alike: one reason, in the first one's place, the counts alike said once and each
    variant's others named (`graphs 1 → 5, compile records 1 → 6 (backward compile records
    1 → 5 on default)`)."""
    groups: dict[tuple[str, str, tuple[str, ...]], list[tuple[_Alike, PastLimit]]] = {}
    for alike, saids in variants_of.items():
        first = seen[saids[0]]
        if first.past is not None and first.variant is not None:
            same = (alike.step, first.past.why, alike.versions)
            groups.setdefault(same, []).append((alike, first.past))
    merged: dict[_Alike, tuple[_Alike, list[_Alike]]] = {}
    for group in groups.values():
        members = [alike for alike, _ in group]
        counts = [past.counts for _, past in group]
        common = [count for count in counts[0] if all(count in other for other in counts[1:])]
        if len(members) < 2 or not common:
            continue
        others = []
        for alike, own in zip(members, counts, strict=True):
            extra = [count for count in own if count not in common]
            if extra:
                names = "; ".join(w.variant_name(seen[s].variant) for s in variants_of[alike])
                others.append(f"{_counts_text(extra)} on {names}")
        head = members[0]
        said = _counts_text(common) + (f" ({'; '.join(others)})" if others else "")
        said = f"{w.metric_name(head.metric)}: {said}{group[0][1].why}"
        merged[head] = (head._replace(message=said), members)
    gone = {alike for _, members in merged.values() for alike in members}
    out: dict[_Alike, list[_Said]] = {}
    for alike, saids in variants_of.items():
        if alike in merged:
            one, members = merged[alike]
            out[one] = [said for member in members for said in variants_of[member]]
        elif alike not in gone:
            out[alike] = saids
    return out


def _counts_text(counts: Sequence[CountMoved]) -> str:
    """`graphs 1 → 5, compile records 1 → 6`."""
    return ", ".join(count.words() for count in counts)


def _reason_message(row: MetricVerdict) -> str:
    """The message a reason shows: for a count (DETAIL_METRICS) only what follows its
    `count a → b (allowed …); `, which the table already says (for CUDA graphs skipped, the
    new skips' reasons and places); for compile work only the
    counts past the limit (every count moved is in the version's gate rows)."""
    if row.metric in DETAIL_METRICS and count_detail(row.facts):
        return "; ".join(count_detail(row.facts))
    graphs = cuda_graph_detail(row.facts)
    if graphs is not None:
        return graphs
    if row.metric in RUN_METRICS:
        return shortened(row_message(row), RUN_REASON_CHARS)
    weakened = numerics_without_reference(row) if row.verdict == "pass" else None
    if weakened is not None:  # the table says pass → pass: only why it needs a look
        return weakened.words()
    past = counts_past_limit(row) if row.metric == "compile_work" else None
    if past is not None:
        return f"{w.metric_name(row.metric)}: {_counts_text(past.counts)}{past.why}"
    return row_message(row)


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
            clauses = count_detail(reason.facts, lambda text: _drop_said(text, said))
            reason = dataclasses.replace(reason, message="; ".join(clauses))
        kept.append(reason)
    return kept


def _drop_said(message: str, said: Sequence[str]) -> str:
    """`message` less each ` (…)` whose words (parentheses inside them kept whole: torch's
    `Tensor.item()`) are in one of `said`."""
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


def _says_more(row: MetricVerdict) -> bool:
    if row.metric in REASON_METRICS:
        return True
    if row.metric in RUN_METRICS:
        return row.verdict in w.FAILING
    return row.metric in DETAIL_METRICS and bool(count_detail(row.facts))


def _break_site(
    version: VersionOutcome, row: MetricVerdict, links: LinkContext
) -> tuple[str | None, str | None]:
    """(`model.py:181`, its URL at the head commit) for a new graph break in the repository."""
    found = new_break_site(row)
    if found is None or found.line is None:
        return None, None
    file, line = found.file, found.line
    for step in version.document.steps if version.document is not None else ():
        for variant in step.variants:
            for site in variant.graph_breaks.sites if variant.graph_breaks is not None else ():
                if (site.file, site.line) == (file, line) and site.in_repository:
                    return f"{file}:{line}", links.blob_url(file, line)
    return f"{file}:{line}", None
