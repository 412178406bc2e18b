"""The first screen: what a reader sees before opening anything — may I merge, and if not, why.

    headline    one sentence: what failed and where, and what did not move
    context     head vs baseline commit, torch versions, the runner, links to the run
    versions    one row per torch version × step: gate, what failed, compiled vs eager (best),
                when compiling pays off
    attention   every failing and every inconclusive gate row, and every passing one whose
                exact counts moved (⚠️): value, change, threshold, noise;
                a row alike on several versions said once, with its versions
    reasons     why each failing code metric failed, in torch's words: a graph break's
                file:line and reason, the count that grew, the worst tensor
    advice      for a failure the noise or the load more likely explains, what to do (rerun),
                and the command that accepts an intended change as the baseline
    footnotes   the estimator behind the speeds, the yardstick, the icons: in the comment,
                closed under "Reading these numbers"

Health (an unsteady machine) is said once for every version it concerns.

`FirstScreen.of(run_set, links)` decides all of it from the run set; `markdown()` and
`text()` only lay it out, so the PR comment and the terminal cannot say different things.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..gate.row_facts_base import RowFactsBase
from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import SEVERITY_ORDER, MetricVerdict, Verdict, sorted_by_severity
from ..results.model import Environment, Step
from . import wording as w
from .advice import advice_for
from .escape import cell, inert, shortened, with_code
from .headline import headline_of
from .health_words import HEALTH_PREFIX, SaidCause, health_line, health_parts
from .links import LinkContext
from .note_words import paired_summary
from .row_cells import ROW_HEADER, row_cells
from .row_words import row_message
from .row_words.compile_cost import CountMoved, PastLimit, counts_past_limit
from .row_words.cuda_graphs import cuda_graph_detail
from .row_words.diagnostics import break_reasons_said, count_detail, new_break_site, place_name
from .row_words.looks import needs_a_look
from .row_words.numerics_reference import of_row as numerics_without_reference
from .row_words.speed import compares_fastest_iterations
from .speeds import best_speed_text, estimator_text, pays_off_text, variant_speed
from .tables import fit_table, markdown_table, wrap_words
from .upgrade_words import UpgradeChanges, upgrade_changes
from .wording import and_list as _and
from .wording import plain_torch as _plain_torch

TEXT_WIDTH = 100
NO_BREAK_SPACE = "\u00a0"
# Past this many version × step rows, one row per version (the details keep every step).
VERSION_ROWS_SHOWN = 24
# Past this many failing or inconclusive rows, the rest are counted (every gate row details).
ATTENTION_ROWS_SHOWN = 60
# `best` last: `compiled vs / eager (best)` wraps to two lines in a narrow column, not three.
SPEED_COLUMN = "compiled vs eager (best)"
VERSION_HEADER = ("torch", "step", "gate", "what failed", SPEED_COLUMN, "pays off")
ATTENTION_HEADER = ROW_HEADER
PROCESSES_NOTE = (
    "Speed rows against the baseline compare each process's fastest iterations (what load "
    "moves least), so their values are not the compiled-vs-eager speeds above."
)
PAIRED_NOTE = (
    "Paired: the base was measured in this job, on this machine, its processes alternating "
    "with the head's (A B B A); each head process is judged against the base process beside "
    "it, so what the machine did meanwhile cancels, and the noise is the 95 % interval of "
    "those paired differences."
)
READING_SUMMARY = "Reading these numbers"
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
# The first screen's run-health line, in a few words (the causes in full are footnotes).
SHORT_UNSTEADY = "the machine was unsteady"
SHORT_HEALTH = "Step times reported, not judged: rerun when it is quiet, or paired (run --against)."
SHORT_PAIRED_HEALTH = "Head vs base judged on their paired differences; no recommendation."
YARDSTICK_NOTE = (
    "Step-time changes between runs on the same torch are judged against a fixed torch "
    "workload timed beside the step (the yardstick), so a runner that is slower today does "
    "not read as a slower step: the milliseconds and the % beside them are what was "
    "measured, the change “per yardstick” what was judged."
)


@dataclass(frozen=True)
class Item:
    """A piece of text that may carry a link."""

    text: str
    url: str | None = None
    style: str = ""  # "bold", "code" or plain


@dataclass(frozen=True)
class AttentionRow:
    """One failing or unclear gate row as every output shows it: its verdict, the versions
    it reads the same on (`2.5, 2.6`; one version: its label), the step and the variants it
    reads the same on (None: a row about the whole step), and its cells after the place
    (ROW_HEADER: what, baseline → now, change, limit, noise)."""

    verdict: Verdict
    versions: str
    step: str
    variants: str | None
    cells: tuple[str, ...]

    @property
    def place(self) -> str:
        """`gpt`, `gpt · default`, `gpt · default; default, dynamic`."""
        return self.step if self.variants is None else f"{self.step} · {self.variants}"


@dataclass(frozen=True)
class AttentionTable:
    """The attention rows laid out once for every output: the header, the rows shown (at
    most ATTENTION_ROWS_SHOWN), how many more there are, and the place every row shares,
    said once in the title (`all in gpt`) instead of on each row. A row on the same
    versions and place as the row above leaves its place blank, as the versions table
    leaves a version's label blank after its first step."""

    count: int
    failing: int
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    more: int
    all_in: str | None = None

    @classmethod
    def of(cls, attention: Sequence[AttentionRow], with_torch: bool) -> AttentionTable:
        header = (("torch",) if with_torch else ()) + ATTENTION_HEADER
        shown = attention[:ATTENTION_ROWS_SHOWN]
        more = len(attention) - len(shown)

        def cells(row: AttentionRow, place: str | None) -> tuple[str, ...]:
            versions = (row.versions,) if with_torch else ()
            return (*versions, *((place,) if place is not None else ()), *row.cells)

        def placed(index: int, place: str | None) -> tuple[str, ...]:
            row, above = shown[index], shown[index - 1] if index else None
            if above is not None and (above.versions, above.place) == (row.versions, row.place):
                place = ""  # said on the row above
            return cells(row, place)

        where = header.index("where")
        counts = (len(attention), sum(1 for row in attention if row.verdict in w.FAILING))
        places = {row.place for row in attention}
        steps = {row.step for row in attention}
        if len(shown) > 1 and len(places) == 1:
            # one place for every row: said once, so the other cells need not wrap
            rows = tuple(cells(row, None) for row in shown)
            header = header[:where] + header[where + 1 :]
            return cls(*counts, header, rows, more, shown[0].place)
        if len(shown) > 1 and len(steps) == 1 and all(r.variants is not None for r in attention):
            # one step for every row: said once, each row's variant in its place
            header = (*header[:where], "variant", *header[where + 1 :])
            rows = tuple(placed(i, row.variants) for i, row in enumerate(shown))
            return cls(*counts, header, rows, more, shown[0].step)
        rows = tuple(placed(i, row.place) for i, row in enumerate(shown))
        return cls(*counts, header, rows, more)

    def title(self) -> str:
        """`Fails (2), needs a look (1)`, `Fails (3)` or `Needs a look (3)` (the place every
        row shares, `all in gpt · default`, follows it)."""
        unclear = self.count - self.failing
        if self.failing and unclear:
            return f"Fails ({self.failing}), needs a look ({unclear})"
        return f"Fails ({self.failing})" if self.failing else f"Needs a look ({self.count})"


@dataclass(frozen=True)
class Reason:
    """Why one failing row failed, in the gate's (and torch's) words, for the versions it
    failed alike on; `site` is the file:line in it that links to the head commit; `facts`
    what the (first) row's judge found. `subject` (the place) is empty where the table
    above already says it: the reason covers every row of its metric there."""

    subject: str
    what: str
    versions: str
    message: str
    site: str | None = None
    url: str | None = None
    facts: RowFactsBase | None = None

    def markdown(self) -> str:
        where = f" in {inert(self.subject)}" if self.subject else ""
        where += f" ({inert(self.versions)})" if self.versions else ""
        # `**graph breaks:** new graph break …` where the table's row says where
        lead = f"**{inert(self.what)}**{where}:" if where else f"**{inert(self.what)}:**"
        said = self.message.removeprefix(f"{self.what}: ")
        message = with_code(said, max_chars=400)
        if self.site and self.url and self.site in said:
            before, after = said.split(self.site, 1)
            message = (
                with_code(before)
                + (" " if before.endswith(" ") else "")
                + f"[{inert(self.site)}]({self.url})"
                + (" " if after.startswith(" ") else "")
                + with_code(after, max_chars=300)
            )
        return f"- {lead} {message}"

    def text(self) -> str:
        versions = f" ({self.versions})" if self.versions else ""
        said = self.message.removeprefix(f"{self.what}: ")
        subject = f" in {self.subject}" if self.subject else ""
        return f"- {self.what}{subject}{versions}: {said}"


@dataclass(frozen=True)
class FirstScreen:
    icon: str
    headline: str
    context: tuple[tuple[tuple[Item, ...], ...], ...]  # lines of groups of items
    versions: tuple[tuple[str, ...], ...]
    attention: tuple[AttentionRow, ...]
    attention_with_torch: bool
    advice: tuple[tuple[str, str | None], ...]
    footnotes: tuple[str, ...]
    health: tuple[str, ...] = ()  # one line for the versions whose machine was unsteady
    reasons: tuple[Reason, ...] = ()
    # Per version on another torch than the baseline's: what moved, largest first.
    upgrades: tuple[UpgradeChanges, ...] = ()

    @classmethod
    def of(cls, run_set: RunSetVerdict, links: LinkContext | None = None) -> FirstScreen:
        links = links or LinkContext()
        icon, headline = headline_of(run_set)
        several = len(run_set.versions) > 1
        return cls(
            icon=icon,
            headline=headline,
            context=_context(run_set, links),
            versions=tuple(_versions(run_set)),
            attention=_attention(run_set),
            attention_with_torch=several,
            reasons=tuple(_reasons(run_set, links, several)),
            advice=tuple(advice_for(run_set)),
            footnotes=tuple(_footnotes(run_set)),
            health=tuple(_health_lines(run_set)),
            upgrades=upgrade_changes(run_set),
        )._with_icon_legend()

    def _with_icon_legend(self) -> FirstScreen:
        """The icons explained once, when the screen shows any."""
        shown = self.markdown()
        if w.FAIL_ICON in shown or w.LOOK_ICON in shown:
            return dataclasses.replace(self, footnotes=(*self.footnotes, w.ICON_LEGEND + "."))
        return self

    def headline_line(self) -> str:
        """The headline on one line (for a log line that points at the full report)."""
        return f"{self.icon} compilegate {self.headline}".strip()

    # -- layout -------------------------------------------------------------------------------

    def attention_lines(self, width: int) -> list[str]:
        """The attention table for a terminal (`report` and `run` alike), `width` columns."""
        if not self.attention:
            return []
        table = AttentionTable.of(self.attention, self.attention_with_torch)
        title = table.title() + (f", all in {table.all_in}" if table.all_in else "")
        lines = ["", title + ":", *fit_table([table.header, *table.rows], width, indent="  ")]
        if table.more:
            lines.append(f"  and {table.more} more")
        return lines

    def markdown(self) -> str:
        lines = [f"### {self.icon} compilegate {inert(self.headline)}".replace("  ", " ")]
        for line in self.health:
            lines += ["", f"> {inert(line)}"]
        # The context's lines in one paragraph, a line break between them (no paragraph gap).
        said = [" · ".join(" ".join(map(_md_item, group)) for group in g) for g in self.context]
        lines += ["", "<br>\n".join(said)] if said else []
        lines += [
            "",
            *markdown_table(VERSION_HEADER, [_version_cells(r) for r in self.versions]),
        ]
        collapsed: list[str] = []  # what else a failing upgrade changed: after its failures
        for upgrade in self.upgrades:
            if not upgrade.changes:
                none = upgrade.none_line()
                lines += ["", inert(none)] if none else []
                continue
            rows = [[cell(c) for c in r] for r in upgrade.rows()]
            more = upgrade.more_line()
            changed = [
                *markdown_table(upgrade.header(), rows),
                *(["", f"_{inert(more)}._"] if more else []),
            ]
            if upgrade.said_above:  # a failing upgrade: its failures first, the rest a click away
                summary = f"<b>{inert(upgrade.title())}</b> ({upgrade.counted()})"
                collapsed += [
                    "",
                    f"<details><summary>{summary}</summary>",
                    "",
                    *changed,
                    "",
                    "</details>",
                ]
            else:
                lines += ["", f"**{inert(upgrade.title())}**", "", *changed]
        if self.attention:
            table = AttentionTable.of(self.attention, self.attention_with_torch)
            title = f"**{table.title()}**"
            title += f", all in {inert(table.all_in)}" if table.all_in else ""
            rows = [[cell(c) for c in r] for r in table.rows]
            lines += ["", title, "", *markdown_table(table.header, rows)]
            if table.more:
                lines += ["", f"_and {table.more} more: each version's “every gate row” below._"]
        if self.reasons:
            lines += ["", *(reason.markdown() for reason in self.reasons)]
        for sentence, command in self.advice:
            lines += ["", f"> {inert(sentence)}" + (f"<br>{_code(command)}" if command else "")]
        if self.footnotes:
            notes = "\n".join(f"- {inert(n)}" for n in self.footnotes)
            lines += [
                "",
                f"<details><summary>{READING_SUMMARY}</summary>\n\n{notes}\n\n</details>",
            ]
        lines += collapsed
        return "\n".join(lines)

    def text(self) -> str:
        lines = wrap_words(self.headline_line(), TEXT_WIDTH)
        for line in self.health:
            lines += wrap_words(line, TEXT_WIDTH)
        for items in self.context:
            lines += wrap_words(
                " · ".join(" ".join(i.text for i in group) for group in items), TEXT_WIDTH
            )
        lines += ["", *fit_table([VERSION_HEADER, *self.versions], TEXT_WIDTH, indent="  ")]
        for upgrade in self.upgrades:
            if not upgrade.changes:
                none = upgrade.none_line()
                lines += ["", *wrap_words(none, TEXT_WIDTH)] if none else []
                continue
            table = [upgrade.header(), *upgrade.rows()]
            lines += ["", upgrade.title() + ":", *fit_table(table, TEXT_WIDTH, indent="  ")]
            more = upgrade.more_line()
            lines += [f"  {more}"] if more else []
        lines += self.attention_lines(TEXT_WIDTH)
        for reason in self.reasons:
            lines += wrap_words(reason.text(), TEXT_WIDTH, hanging="    ")
        for sentence, command in self.advice:
            lines += ["", *wrap_words(sentence, TEXT_WIDTH)]
            if command:
                lines.append(f"  {command}")
        if self.footnotes:
            lines.append("")
            for note in self.footnotes:
                lines += wrap_words(note, TEXT_WIDTH)
        return "\n".join(lines)


# -- context, versions, attention -------------------------------------------------------------


def _health_lines(run_set: RunSetVerdict) -> list[str]:
    """The run-health line, once, in two lines of the comment at most: the versions whose
    machine was unsteady, the first cause of each group of like causes in a few words and
    how many more, and what that means. Every cause in full is under "Reading these
    numbers" (_health_in_full)."""
    groups: dict[tuple[SaidCause, ...], list[str]] = {}
    paired = False
    for version in run_set.versions:
        parts = health_parts(version.document) if version.document is not None else None
        if parts is None:
            continue
        groups.setdefault(tuple(parts[0]), []).append(_version_label(version))
        paired |= version.document is not None and version.document.pairing is not None
    if not groups:
        return []
    several = len(run_set.versions) > 1
    said = []
    for causes, labels in groups.items():
        first = causes[0].short
        more = len(causes) - 1
        first += f" (+{more} more)" if more else ""
        said.append(f"torch {_and(labels)}: {first}" if len(groups) > 1 else first)
    on = f" (torch {_and(next(iter(groups.values())))})" if several and len(groups) == 1 else ""
    consequence = SHORT_PAIRED_HEALTH if paired else SHORT_HEALTH
    return [f"{HEALTH_PREFIX}{on}: {SHORT_UNSTEADY} — " + "; ".join(said) + f". {consequence}"]


def _health_in_full(run_set: RunSetVerdict) -> list[str]:
    """Every cause of an unsteady machine, for "Reading these numbers": the line each run
    says (report/health_words.health_line), once for the versions that say it alike."""
    lines: dict[str, list[str]] = {}
    for version in run_set.versions:
        line = health_line(version.document) if version.document is not None else None
        if line:
            lines.setdefault(line.removeprefix(HEALTH_PREFIX), []).append(_version_label(version))
    several = len(run_set.versions) > 1
    return [
        "Run health" + (f" (torch {_and(labels)})" if several else "") + line
        for line, labels in lines.items()
    ]


def _version_label(version: VersionOutcome) -> str:
    """`2.9.1` (its torch, without the local suffix), or the version's label."""
    return _plain_torch(version.torch) if version.torch else version.label.removeprefix("torch ")


def _attention(run_set: RunSetVerdict) -> tuple[AttentionRow, ...]:
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


def _reasons(run_set: RunSetVerdict, links: LinkContext, several: bool) -> list[Reason]:
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


def _context(
    run_set: RunSetVerdict, links: LinkContext
) -> tuple[tuple[tuple[Item, ...], ...], ...]:
    """Two lines: the commits and the machine; the torch versions and the links."""
    first = next((v.document for v in run_set.versions if v.document is not None), None)
    env = first.environment if first is not None else Environment()
    baseline = run_set.baseline
    base_env = baseline.environment if baseline is not None else Environment()
    head = links.head_sha or env.commit
    base = base_env.commit
    groups: list[tuple[Item, ...]] = [
        (Item("head", style="bold"), Item(_short(head), links.commit_url(head), "code"))
    ]
    measured = _commits_measured(run_set)
    if len(measured) > 1:
        # Versions measured at different commits: each one's, never one for all (issue 54,
        # finding 10).
        items = [Item("head", style="bold")]
        for commit, labels in measured.items():
            items += [
                Item(_short(commit), links.commit_url(commit), "code"),
                Item(f"(torch {_and(labels)})"),
            ]
        groups = [tuple(items)]
    if run_set.baseline is not None:
        paired = next((v.verdict.paired for v in run_set.versions if v.verdict), None)
        about = [f"torch {_plain_torch(base_env.torch)}"] if base_env.torch else []
        about += [paired_summary(paired)] if paired else []
        groups.append(
            (
                Item("base" if paired else "baseline", style="bold"),
                Item(_short(base), links.commit_url(base), "code"),
                *([Item(f"({'; '.join(about)})")] if about else []),
            )
        )
    where = env.gpu_name or (
        f"CPU {env.cpu_model or env.processor or '?'}, {env.cpu_count or '?'} cores"
    )
    runner = f"runner {links.runner}: {where}" if links.runner else f"measured on {where}"
    groups.append((Item(runner),))
    torches = [_plain_torch(v.torch) if v.torch else v.label for v in run_set.versions]
    second: list[tuple[Item, ...]] = [(Item("torch", style="bold"), Item(", ".join(torches)))]
    base_torch_plain = _plain_torch(base_env.torch) if base_env.torch else None
    # Each version against the torch it was judged against (a paired leg: its own base's).
    other = [
        _plain_torch(v.torch)
        for v in run_set.versions
        if v.torch and _other_torch(v.torch, v.base_torch or base_env.torch)
    ]
    upgrade = "an upgrade check against the baseline's torch"
    if other == torches and len(torches) == 1:
        # `torch 2.13.0: an upgrade check…`, not `torch 2.13.0 · 2.13.0: an upgrade check…`
        second = [(Item("torch", style="bold"), Item(f"{torches[0]}: {upgrade}"))]
    elif other:
        named = _and(other) if len(other) <= 3 else f"{len(other)} versions"
        second.append((Item(f"{named}: {upgrade}"),))
    second += [(Item(label, url),) for label, url in links.run_links()]
    if len(second) == 1 and torches == [base_torch_plain]:
        # One version, the baseline's torch (said beside it) and no links: a line of nothing new.
        return (tuple(groups),)
    return (tuple(groups), tuple(second))


def _other_torch(torch: str, judged_against: str | None) -> bool:
    """Whether a version was judged against a baseline measured on another torch."""
    return bool(judged_against) and _plain_torch(torch) != _plain_torch(str(judged_against))


def _commits_measured(run_set: RunSetVerdict) -> dict[str, list[str]]:
    """Each commit the versions' results were measured at, with the versions at it."""
    found: dict[str, list[str]] = {}
    for version in run_set.versions:
        commit = version.document.environment.commit if version.document is not None else None
        if commit:
            found.setdefault(str(commit), []).append(_version_label(version))
    return found


def _versions(run_set: RunSetVerdict) -> list[tuple[str, ...]]:
    rows = [row for version in run_set.versions for row in _version_rows(version)]
    if len(rows) <= VERSION_ROWS_SHOWN:
        return rows
    return [_version_summary(version) for version in run_set.versions]


def _version_summary(version: VersionOutcome) -> tuple[str, ...]:
    """One row for a whole version: its worst gate and the steps that failed."""
    rows = _version_rows(version)
    label = rows[0][0]
    if version.document is None:
        return rows[0]
    failed = [r for r in rows if r[2].startswith(w.FAIL_ICON)]
    unclear = [r for r in rows if r[2].startswith(w.LOOK_ICON)]
    gate = (failed or unclear or rows)[0][2]
    what = "; ".join(f"{r[1]}: {r[3]}" for r in (failed or unclear)[:3])
    if len(failed or unclear) > 3:
        what += f"; and {len(failed or unclear) - 3} more steps"
    return (label, f"{len(rows)} steps", gate, what or "-", "per step: see details", "-")


def _version_rows(version: VersionOutcome) -> list[tuple[str, ...]]:
    label = _plain_torch(version.torch) if version.torch else version.label.removeprefix("torch ")
    if version.document is None:
        return [
            (label, "-", f"{w.FAIL_ICON} error", w.version_error(version) or "no result", "-", "-")
        ]
    rows: list[tuple[str, ...]] = []
    by_step: dict[str, list[MetricVerdict]] = {}  # one pass: a result may hold 100,000 steps
    for verdict in version.verdict.verdicts if version.verdict is not None else ():
        by_step.setdefault(verdict.step, []).append(verdict)
    for index, step in enumerate(version.document.steps):
        mine = by_step.get(step.name, [])
        rows.append(
            (
                label if index == 0 else "",
                step.name,
                _gate(version, mine, step),
                _what_failed(mine, step),
                best_speed_text(step),
                pays_off_text(step),
            )
        )
    return rows


def _gate(version: VersionOutcome, rows: list[MetricVerdict], step: Step) -> str:
    if version.verdict is None:
        return f"{w.FAIL_ICON} error" if step.failed else "measured"
    if not rows:
        return "-"
    top = sorted_by_severity(rows)[0].verdict
    if top in w.FAILING:
        return f"{w.FAIL_ICON} fails"
    if top == "inconclusive":
        return f"{w.LOOK_ICON} unclear"
    if top == "accepted":
        return "accepted"
    return {"improvement": "pass (better)", "new": "new"}.get(top, "pass")


def _what_failed(rows: list[MetricVerdict], step: Step) -> str:
    """`graph breaks (new at model.py:144), eager step time`: each failing metric once (a
    percentile with its metric: the table below lists both), a new graph break with its
    file:line, so the first view holds where to look; then what was unclear or accepted."""
    names: list[str] = []
    for row in sorted_by_severity(rows):
        if row.verdict in w.FAILING:
            name = (
                w.metric_name(w.without_quantile(row.metric))
                if row.metric not in ("step", "variant")
                else w.verdict_word(row.verdict)
            )
            if name not in names:
                names.append(name)
    sites = list(dict.fromkeys(_new_break_sites(rows)))
    if sites and w.metric_name("graph_break_sites") in names:
        at = names.index(w.metric_name("graph_break_sites"))
        shown = ", ".join(sites[:2]) + (f" and {len(sites) - 2} more" if len(sites) > 2 else "")
        names[at] += f" (new at {shown})"
    unclear = sorted(
        {w.metric_name(w.without_quantile(r.metric)) for r in rows if r.verdict == "inconclusive"}
    )
    accepted = sorted({w.metric_name(r.metric) for r in rows if r.verdict == "accepted"})
    if accepted:
        names.append("accepted: " + ", ".join(accepted))
    if not rows and step.failed:
        names.append("the step failed")
    text = ", ".join(names)
    if unclear:
        text += ("; " if text else "") + "unclear: " + ", ".join(unclear)
    return text or "-"


def _new_break_sites(rows: list[MetricVerdict]) -> list[str]:
    """`model.py:144` of each failing row's new graph break, in the rows' order."""
    found = []
    for row in sorted_by_severity(rows):
        at = new_break_site(row)
        if at is not None and at.line is not None and row.verdict in w.FAILING:
            found.append(place_name(at))
    return found


def _footnotes(run_set: RunSetVerdict) -> list[str]:
    estimators: list[str] = []
    yardstick = processes = paired = False
    for version in run_set.versions:
        for step in version.document.steps if version.document is not None else ():
            for variant in step.variants:
                speed = variant_speed(step, variant)
                if speed is not None and speed.estimator not in estimators:
                    estimators.append(speed.estimator)
        if version.verdict is not None:
            yardstick |= any(r.normalisation == "yardstick" for r in version.verdict.verdicts)
            processes |= any(compares_fastest_iterations(r) for r in version.verdict.verdicts)
            paired |= version.verdict.paired is not None
    notes = [*_health_in_full(run_set)]
    if estimators:
        described = "; ".join(estimator_text(e) for e in estimators)
        notes.append(f"Compiled vs eager: {described}.")
    judged_how = speed_judged_how(run_set)
    if judged_how:
        notes.append(judged_how)
    if processes:
        notes.append(PROCESSES_NOTE)
    if paired:
        notes.append(PAIRED_NOTE)
    if yardstick:
        notes.append(YARDSTICK_NOTE)
    return notes


# Rows about the step's speed, by how the gate judged them (issue 39).
SPEED_COUNT_METRICS = ("step_work",)
SPEED_TIME_FAMILIES = ("speedup", "eager_step_ms", "compiled_step_ms")


def speed_judged_how(run_set: RunSetVerdict) -> str | None:
    """Which speed rows were judged by counts (the same on any machine and load), which by
    time, and which were only reported: `Judged by counts of work (…): step work. Judged by
    time: speedup vs eager. Only reported: eager step time; compiled step time.` None
    without speed rows."""
    counted: list[str] = []
    timed: list[str] = []
    reported: list[str] = []
    for version in run_set.versions:
        for row in version.verdict.verdicts if version.verdict is not None else ():
            if row.metric in SPEED_COUNT_METRICS and w.gated(row):
                target = counted
            elif row.metric.startswith(SPEED_TIME_FAMILIES):
                target = timed if w.gated(row) else reported
            else:
                continue
            name = w.metric_name(row.metric)
            if name not in target:
                target.append(name)
    reported = [name for name in reported if name not in timed]
    # A name may hold a comma (`eager step time, 25th percentile`): names are parted by
    # semicolons, the three kinds by sentences.
    parts = [
        f"{how} {'; '.join(names)}."
        for how, names in (
            ("Judged by counts of work (the same on any machine, under any load):", counted),
            ("Judged by time:", timed),
            ("Only reported:", reported),
        )
        if names
    ]
    return " ".join(parts) if parts else None


# -- small helpers --------------------------------------------------------------------------------


def _version_cells(row: tuple[str, ...]) -> list[str]:
    """A versions-table row's markdown cells, its gate's icon and word on one line
    (`❌ fails` split in two made each row of a narrow table a line taller)."""
    cells = [cell(text) for text in row]
    gate = VERSION_HEADER.index("gate")
    cells[gate] = cells[gate].replace(" ", NO_BREAK_SPACE)
    return cells


def _short(sha: object) -> str:
    return str(sha)[:7] if sha else "(not recorded)"


def _code(command: str) -> str:
    """A command as a code span, unless its text (paths the operator gave) could end one."""
    if "`" in command or not command.isprintable():
        return inert(command)
    return f"`{command}`"


def _md_item(item: Item) -> str:
    text = inert(item.text)
    if item.style == "code" and item.text.isalnum():
        text = f"`{item.text}`"
    elif item.style == "bold":
        text = f"**{text}**"
    return f"[{text}]({item.url})" if item.url else text
