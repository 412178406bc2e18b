"""The first screen laid out: the PR comment's markdown and the terminal's text (`report`
and `run`) of one FirstScreen (first_screen/screen.py), so they cannot say different
things. Layout only: every choice of what is said was made when the screen was built."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import wording as w
from ..escape import cell, inert, with_code
from ..row_cells import ROW_HEADER
from ..tables import fit_table, markdown_table, wrap_words
from .model import AttentionRow, Item, Reason, ScreenParts

TEXT_WIDTH = 100
NO_BREAK_SPACE = "\u00a0"
# Past this many failing or inconclusive rows, the rest are counted (every gate row details).
ATTENTION_ROWS_SHOWN = 60
# `best` last: `compiled vs / eager (best)` wraps to two lines in a narrow column, not three.
SPEED_COLUMN = "compiled vs eager (best)"
VERSION_HEADER = ("torch", "step", "gate", "what failed", SPEED_COLUMN, "pays off")
ATTENTION_HEADER = ROW_HEADER
READING_SUMMARY = "Reading these numbers"


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


def attention_lines(screen: ScreenParts, width: int) -> list[str]:
    """The attention table for a terminal (`report` and `run` alike), `width` columns."""
    if not screen.attention:
        return []
    table = AttentionTable.of(screen.attention, screen.attention_with_torch)
    title = table.title() + (f", all in {table.all_in}" if table.all_in else "")
    lines = ["", title + ":", *fit_table([table.header, *table.rows], width, indent="  ")]
    if table.more:
        lines.append(f"  and {table.more} more")
    return lines


def screen_markdown(screen: ScreenParts) -> str:
    lines = [f"### {screen.icon} compilegate {inert(screen.headline)}".replace("  ", " ")]
    for line in screen.health:
        lines += ["", f"> {inert(line)}"]
    # The context's lines in one paragraph, a line break between them (no paragraph gap).
    said = [" · ".join(" ".join(map(_md_item, group)) for group in g) for g in screen.context]
    lines += ["", "<br>\n".join(said)] if said else []
    lines += [
        "",
        *markdown_table(VERSION_HEADER, [_version_cells(r) for r in screen.versions]),
    ]
    collapsed: list[str] = []  # what else a failing upgrade changed: after its failures
    for upgrade in screen.upgrades:
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
    if screen.attention:
        table = AttentionTable.of(screen.attention, screen.attention_with_torch)
        title = f"**{table.title()}**"
        title += f", all in {inert(table.all_in)}" if table.all_in else ""
        rows = [[cell(c) for c in r] for r in table.rows]
        lines += ["", title, "", *markdown_table(table.header, rows)]
        if table.more:
            lines += ["", f"_and {table.more} more: each version's “every gate row” below._"]
    if screen.reasons:
        lines += ["", *(reason_markdown(reason) for reason in screen.reasons)]
    for sentence, command in screen.advice:
        lines += ["", f"> {inert(sentence)}" + (f"<br>{_code(command)}" if command else "")]
    if screen.footnotes:
        notes = "\n".join(f"- {inert(n)}" for n in screen.footnotes)
        lines += [
            "",
            f"<details><summary>{READING_SUMMARY}</summary>\n\n{notes}\n\n</details>",
        ]
    lines += collapsed
    return "\n".join(lines)


def screen_text(screen: ScreenParts) -> str:
    lines = wrap_words(screen.headline_line(), TEXT_WIDTH)
    for line in screen.health:
        lines += wrap_words(line, TEXT_WIDTH)
    for items in screen.context:
        lines += wrap_words(
            " · ".join(" ".join(i.text for i in group) for group in items), TEXT_WIDTH
        )
    lines += ["", *fit_table([VERSION_HEADER, *screen.versions], TEXT_WIDTH, indent="  ")]
    for upgrade in screen.upgrades:
        if not upgrade.changes:
            none = upgrade.none_line()
            lines += ["", *wrap_words(none, TEXT_WIDTH)] if none else []
            continue
        table = [upgrade.header(), *upgrade.rows()]
        lines += ["", upgrade.title() + ":", *fit_table(table, TEXT_WIDTH, indent="  ")]
        more = upgrade.more_line()
        lines += [f"  {more}"] if more else []
    lines += attention_lines(screen, TEXT_WIDTH)
    for reason in screen.reasons:
        lines += wrap_words(reason_text(reason), TEXT_WIDTH, hanging="    ")
    for sentence, command in screen.advice:
        lines += ["", *wrap_words(sentence, TEXT_WIDTH)]
        if command:
            lines.append(f"  {command}")
    if screen.footnotes:
        lines.append("")
        for note in screen.footnotes:
            lines += wrap_words(note, TEXT_WIDTH)
    return "\n".join(lines)


def reason_markdown(reason: Reason) -> str:
    """`- **graph breaks** in gpt (torch 2.9): new graph break at [model.py:42](…): …`."""
    where = f" in {inert(reason.subject)}" if reason.subject else ""
    where += f" ({inert(reason.versions)})" if reason.versions else ""
    # `**graph breaks:** new graph break …` where the table's row says where
    lead = f"**{inert(reason.what)}**{where}:" if where else f"**{inert(reason.what)}:**"
    said = reason.sentence
    if not (said.site and reason.url):
        return f"- {lead} {with_code(said.text(), max_chars=400)}"
    before = said.before_site
    message = (
        with_code(before)
        # inert text keeps no space at its ends: the one beside the link said again
        + (" " if before.endswith(" ") else "")
        + f"[{inert(said.site)}]({reason.url})"
        + (" " if said.after.startswith(" ") else "")
        + with_code(said.after, max_chars=300)
    )
    return f"- {lead} {message}"


def reason_text(reason: Reason) -> str:
    """`- graph breaks in gpt (torch 2.9): new graph break at model.py:42: …`."""
    return f"- {reason_line(reason)}"


def reason_line(reason: Reason) -> str:
    """reason_text without its bullet (`run` indents it under the table instead)."""
    versions = f" ({reason.versions})" if reason.versions else ""
    subject = f" in {reason.subject}" if reason.subject else ""
    return f"{reason.what}{subject}{versions}: {reason.message}"


def _version_cells(row: tuple[str, ...]) -> list[str]:
    """A versions-table row's markdown cells, its gate's icon and word on one line
    (`❌ fails` split in two made each row of a narrow table a line taller)."""
    cells = [cell(text) for text in row]
    gate = VERSION_HEADER.index("gate")
    cells[gate] = cells[gate].replace(" ", NO_BREAK_SPACE)
    return cells


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
