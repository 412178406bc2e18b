"""A gate row in the reader's terms, the same in the first screen, the details and the
terminal: where, what, baseline → now (in the reader's unit, rounded to the noise), change,
limit and noise.

Compile work is several counts judged together; its row names the count it shows
(`graphs 1 → 5`), the first in torch's order (graphs, FX nodes, guards, …) that crossed
the limit, so a reader can tell what the number counts."""

from __future__ import annotations

import dataclasses
import re

from ..gate.judges.compile_cost import COUNTS
from ..gate.run_set import VersionOutcome
from ..gate.verdict import MetricVerdict
from . import wording as w
from .wording import plain_torch

ROW_HEADER = ("where", "what", "baseline → now", "change", "limit", "noise")
_RAW_MS = re.compile(r"raw ([0-9.]+) ms → ([0-9.]+) ms")
# `graphs 1 → 5` in a compile-work message; longer names first (`backward compile records`).
_COUNT_MOVED = re.compile(
    "(?P<name>"
    + "|".join(re.escape(n) for n in sorted(COUNTS.values(), key=len, reverse=True))
    + r") (?P<before>\d+) → (?P<after>\d+)"
)


def row_cells(version: VersionOutcome, row: MetricVerdict, several: bool) -> tuple[str, ...]:
    values = "-"
    count_name = ""
    if row.metric == "compile_work":
        count_name, row = _leading_count(row)
    if row.metric in ("step", "variant"):  # about the whole step or variant: say why
        what = f"{w.icon(row.verdict)} {w.verdict_word(row.verdict)}"
        values = row.message if len(row.message) <= 160 else row.message[:159] + "…"
    else:
        what = f"{w.icon(row.verdict)} {w.metric_name(row.metric)}"
        if row.baseline is not None or row.current is not None:
            values = w.values_text(*_reader_values(row), row.noise_pct)
            values = f"{count_name} {values}" if count_name else values
        if row.change is None and row.verdict != "pass":
            what += f": {w.verdict_word(row.verdict)}"
    cells = (
        w.row_subject(row),
        what.strip(),
        values,
        w.change_text(row),
        w.threshold_text(row),
        _noise(row),
    )
    torch = plain_torch(version.torch) if version.torch else version.label
    return ((torch,) if several else ()) + cells


def counts_past_limit(row: MetricVerdict) -> tuple[list[tuple[str, int, int]], str]:
    """([(`graphs`, 1, 5), …], `: grew by more than …`): the compile-work counts in torch's
    order (as the message lists them) that moved past the limit the way the verdict says
    (grew for a regression, fell for an improvement), and what the message says after
    its counts, to the end of that clause; ([], "") when none did."""
    found = list(_COUNT_MOVED.finditer(row.message))
    limit = row.threshold if row.threshold is not None else 0.0
    past = []
    for match in found:
        before, after = int(match["before"]), int(match["after"])
        change = _change_pct(before, after)
        grew = change > limit and after - before >= 1
        if (grew and row.verdict in w.FAILING) or (
            -change > limit and row.verdict == "improvement"
        ):
            past.append((match["name"], before, after))
    # What follows the counts up to the next clause: the per-op note and any other clause
    # are the gate row's (every gate row in the details), not the first screen's.
    return past, (row.message[found[-1].end() :].split("; ", 1)[0] if past else "")


def _change_pct(before: int, after: int) -> float:
    return (after - before) / max(before, 1) * 100


def _leading_count(row: MetricVerdict) -> tuple[str, MetricVerdict]:
    """(`graphs`, the row with that count's values and change): the first count past the
    limit (counts_past_limit), else the count whose values the gate gave the row; ("", row)
    when the message names none."""
    past, _ = counts_past_limit(row)
    if past:
        name, before, after = past[0]
        change = _change_pct(before, after)
        return name, dataclasses.replace(row, baseline=before, current=after, change=change)
    for match in _COUNT_MOVED.finditer(row.message):
        if (int(match["before"]), int(match["after"])) == (row.baseline, row.current):
            return match["name"], row
    return "", row


def _noise(row: MetricVerdict) -> str:
    if row.unit in (None, "count", "status") or row.metric in ("step", "variant"):
        return "-"  # counts and statuses are exact
    judged = row.change_unit == "pct" and row.threshold is not None
    return w.noise_words(row.noise_pct, row.decidable if judged else None)


def _reader_values(row: MetricVerdict) -> tuple[object, object, str | None]:
    """Values in the reader's unit: step times judged in yardstick units are shown in the
    milliseconds the gate's message gives for them."""
    if row.unit == "yardsticks":
        found = _RAW_MS.search(row.message)
        if found:
            return float(found.group(1)), float(found.group(2)), "ms"
    return row.baseline, row.current, row.unit
