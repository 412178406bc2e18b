"""The first screen as one value: `FirstScreen.of(run_set, links)` decides all of it from
the run set (first_screen/grouping.py, context.py, versions.py); `markdown()` and `text()`
only lay it out (first_screen/render.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...gate.run_set import RunSetVerdict
from .. import wording as w
from ..advice import advice_for
from ..headline import headline_of
from ..links import LinkContext
from ..row_words import worded_rows
from ..row_words.worded import WordedRows
from ..upgrade_words import upgrade_changes
from .context import context_of, footnotes_of, health_lines
from .grouping import attention_rows, reasons_of
from .model import ScreenParts
from .render import attention_lines, screen_markdown, screen_text
from .versions import version_rows


@dataclass(frozen=True)
class FirstScreen(ScreenParts):
    """The first screen: its parts chosen from a run set (`of`), and laid out."""

    @classmethod
    def of(
        cls,
        run_set: RunSetVerdict,
        links: LinkContext | None = None,
        worded: WordedRows | None = None,
    ) -> FirstScreen:
        """`worded`: what report/ says of each row (row_words.worded_rows), made here if not
        given: the headline, the rows to look at, the reasons and the upgrade read it."""
        links = links or LinkContext()
        worded = worded or worded_rows(run_set.versions)
        icon, headline = headline_of(run_set, worded)
        several = len(run_set.versions) > 1
        return cls(
            icon=icon,
            headline=headline,
            context=context_of(run_set, links),
            versions=tuple(version_rows(run_set)),
            attention=attention_rows(run_set, worded),
            attention_with_torch=several,
            reasons=tuple(reasons_of(run_set, worded, links, several)),
            advice=tuple(advice_for(run_set)),
            footnotes=tuple(footnotes_of(run_set)),
            health=tuple(health_lines(run_set)),
            upgrades=upgrade_changes(run_set, worded),
        )._with_icon_legend()

    def _with_icon_legend(self) -> FirstScreen:
        """The icons explained once, when the screen shows any."""
        shown = self.markdown()
        if w.FAIL_ICON in shown or w.LOOK_ICON in shown:
            return dataclasses.replace(self, footnotes=(*self.footnotes, w.ICON_LEGEND + "."))
        return self

    def attention_lines(self, width: int) -> list[str]:
        """The attention table for a terminal (`report` and `run` alike), `width` columns."""
        return attention_lines(self, width)

    def markdown(self) -> str:
        """The PR comment's first screen."""
        return screen_markdown(self)

    def text(self) -> str:
        """The terminal's first screen (`report`)."""
        return screen_text(self)
