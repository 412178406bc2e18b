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
One module per job:

    model.py      the parts as values: Item, AttentionRow, Reason, and ScreenParts (them all)
    said.py       what a row's reason says: the facts its words are composed from, the words
    grouping.py   which rows are said together (the attention rows, the reasons)
    versions.py   the versions table's rows
    context.py    the context lines, the run-health line, the footnotes
    render.py     the layout: the comment's markdown, the terminal's text
    screen.py     FirstScreen: the parts chosen from a run set (`of`), and laid out
"""

from __future__ import annotations

from .context import PROCESSES_NOTE, YARDSTICK_NOTE, speed_judged_how
from .model import AttentionRow, Item, Reason
from .render import TEXT_WIDTH, AttentionTable, reason_line, reason_markdown, reason_text
from .screen import FirstScreen

__all__ = [
    "PROCESSES_NOTE",
    "TEXT_WIDTH",
    "YARDSTICK_NOTE",
    "AttentionRow",
    "AttentionTable",
    "FirstScreen",
    "Item",
    "Reason",
    "reason_line",
    "reason_markdown",
    "reason_text",
    "speed_judged_how",
]
