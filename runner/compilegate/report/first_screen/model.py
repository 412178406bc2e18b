"""The first screen's parts as values: a context item, an attention row, a reason. Chosen
by first_screen/grouping.py and first_screen/context.py, laid out by first_screen/render.py
(the markdown of the comment, the text of `report` and `run`)."""

from __future__ import annotations

from dataclasses import dataclass

from ...gate.row_facts_base import RowFactsBase
from ...gate.verdict import Verdict
from ..row_words.sentence import RowSentence
from ..upgrade_words import UpgradeChanges


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
class Reason:
    """Why one failing row failed, in the gate's (and torch's) words, for the versions it
    failed alike on: `sentence` its words (without the family `what` names already), whose
    site (a new graph break's file:line) links to the head commit at `url`; `facts` what
    the (first) row's judge found. `subject` (the place) is empty where the table above
    already says it: the reason covers every row of its metric there."""

    subject: str
    what: str
    versions: str
    sentence: RowSentence
    url: str | None = None
    facts: RowFactsBase | None = None

    @property
    def message(self) -> str:
        """Its words in full."""
        return self.sentence.text()


@dataclass(frozen=True)
class ScreenParts:
    """Everything the first screen says, as chosen from a run set (first_screen/screen.py
    FirstScreen.of) before it is laid out (first_screen/render.py)."""

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

    def headline_line(self) -> str:
        """The headline on one line (for a log line that points at the full report)."""
        return f"{self.icon} compilegate {self.headline}".strip()
