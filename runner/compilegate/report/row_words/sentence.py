"""A row's sentence in its parts, so that a screen lays it out without cutting it apart:
the first screen's reasons leave out the family the bold lead before them names already
(`**step work:** ATen ops …`, not `**step work:** step work: ATen ops …`), and link the
place of a new graph break to the head commit.

    step work: ATen ops 3,400 → 3,434 (…): grew by more than the 0 % tolerance
    ^lead      ^words

    new graph break at model.py:42 (cause: util.py:7): Data-dependent branching
    ^words             ^site       ^after
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RowSentence:
    """`lead`: the family the sentence opens with (`step work` for `step work: …`; "" when
    it opens with none); `words`: what it says up to `site`, the place of the row's first
    new graph break (`model.py:42`; "" when it names none); `after`: the words after it."""

    lead: str
    words: str
    site: str = ""
    after: str = ""

    @property
    def said(self) -> str:
        """The sentence after its lead."""
        return f"{self.words}{self.site}{self.after}"

    @property
    def before_site(self) -> str:
        """The sentence up to its site, its lead included."""
        return f"{self.lead}: {self.words}" if self.lead else self.words

    def text(self) -> str:
        """The whole sentence."""
        return f"{self.before_site}{self.site}{self.after}"

    def with_after(self, clause: str) -> RowSentence:
        """The sentence with `clause` after its last words."""
        return RowSentence(self.lead, self.words, self.site, f"{self.after}{clause}")
