"""A gate row in the reader's terms, the same in the first screen, the details and the
terminal: where, what, baseline → now (in the reader's unit, rounded to the noise), change,
limit and noise.

One rule for a row's numbers: the change beside the values is the change of those values,
and the values carry the digits that show it (`0.85× → 0.77×`, never `0.8× → 0.8× −9 %`).
A step time the gate judged in yardstick units (a fixed workload timed beside the step, so a
slower runner does not read as a slower step) is shown in the milliseconds measured, with
their own change, and the judged change names its unit:

    9.51 ms → 9.94 ms (+4.5 %)    +27 % per yardstick    +5 %

A row about a whole step or variant says why, shortened to MESSAGE_CHARS with the location
at its end (` (at model.py:57)`) kept whole; on the first screen and the terminal, in the
reasons under the table instead (`why_below`).

Compile work is several counts judged together; its row names the count it shows
(`graphs 1 → 5`), the first in torch's order (graphs, FX nodes, guards, …) that crossed
the limit, so a reader can tell what the number counts."""

from __future__ import annotations

import dataclasses

from ..gate.run_set import VersionOutcome
from ..gate.verdict import MetricVerdict
from . import wording as w
from .escape import shortened
from .row_words import row_message
from .row_words.compile_cost import count_of_values, counts_past_limit, raw_change_pct
from .row_words.looks import passes_with_a_look
from .row_words.speed import raw_ms_as_said
from .row_words.too_few_pairs import TOO_FEW, too_few_pairs
from .wording import plain_torch

ROW_HEADER = ("where", "what", "baseline → now", "change", "limit", "noise")
YARDSTICK_UNIT = "yardsticks"
PER_YARDSTICK = "per yardstick"
MESSAGE_CHARS = 160


def row_cells(
    version: VersionOutcome, row: MetricVerdict, several: bool, *, why_below: bool = False
) -> tuple[str, ...]:
    """The row's cells (ROW_HEADER), `torch` first when `several`. `why_below`: a step or
    variant row leaves why it failed to the reasons under the table (first_screen/), which
    have the full width for it."""
    values = "-"
    count_name = ""
    if row.metric == "compile_work":
        count_name, row = _leading_count(row)
    if row.metric in ("step", "variant"):  # about the whole step or variant: say why
        what = f"{w.icon(row.verdict)} {w.verdict_word(row.verdict)}"
        values = "-" if why_below else shortened(row_message(row), MESSAGE_CHARS)
    else:
        # ⚠️ also for a passing row whose exact counts moved (row_words/moved_counts.py)
        icon = w.icon(row.verdict) or (w.LOOK_ICON if passes_with_a_look(row) else "")
        what = f"{icon} {w.metric_name(row.metric)}"
        if row.baseline is not None or row.current is not None:
            values = reader_values(row)
            values = f"{count_name} {values}" if count_name else values
        if row.change is None and row.verdict != "pass":
            what += f": {w.verdict_word(row.verdict)}"
    cells = (
        w.row_subject(row),
        what.strip(),
        values,
        judged_change(row),
        w.threshold_text(row),
        _noise(row),
    )
    torch = plain_torch(version.torch) if version.torch else version.label
    return ((torch,) if several else ()) + cells


def _leading_count(row: MetricVerdict) -> tuple[str, MetricVerdict]:
    """(`graphs`, the row with that count's values and change): the first count past the
    limit (row_words.compile_cost.counts_past_limit), else the count whose values the gate
    gave the row; ("", row) when the row lists none."""
    past = counts_past_limit(row)
    if past is not None:
        count = past.counts[0]
        change = raw_change_pct(count.before, count.after)
        return count.name, dataclasses.replace(
            row, baseline=count.before, current=count.after, change=change
        )
    listed = count_of_values(row)
    return (listed.name, row) if listed is not None else ("", row)


def _noise(row: MetricVerdict) -> str:
    if row.unit in (None, "count", "status") or row.metric in ("step", "variant"):
        return "-"  # counts and statuses are exact
    if too_few_pairs(row) is not None:
        return TOO_FEW  # a ± from one or two pairs means nothing
    judged = row.change_unit == "pct" and row.threshold is not None
    return w.noise_words(row.noise_pct, row.decidable if judged else None)


def judged_change(row: MetricVerdict) -> str:
    """The change the gate judged: `+27 % per yardstick` for a step time judged in yardstick
    units (the values beside it are milliseconds, with their own change), else `+27 %`."""
    text = w.change_text(row)
    if row.unit == YARDSTICK_UNIT and row.change is not None:
        return f"{text} {PER_YARDSTICK}"
    return text


def reader_values(row: MetricVerdict) -> str:
    """`baseline → now` in the reader's unit with the digits their change needs: rounded to
    the noise, unless that rounds the change away (then the fewest decimals that show it).
    A yardstick-unit step time: the milliseconds measured and their own change,
    `9.51 ms → 9.94 ms (+4.5 %)`."""
    raw = raw_ms_as_said(row) if row.unit == YARDSTICK_UNIT else None
    if raw is not None:
        base, now, change = raw
        places = 0 if abs(change) >= 10 else 1
        values = _with_digits(base, now, "ms", row.noise_pct)
        return f"{values} ({change:+.{places}f} %)".replace("-", "−")
    unit = row.unit or ""
    if unit not in w.TIMED_SUFFIXES:
        return w.values_text(row.baseline, row.current, row.unit, row.noise_pct)
    return _with_digits(row.baseline, row.current, unit, row.noise_pct)


def _with_digits(base: object, now: object, unit: str, noise_pct: float | None) -> str:
    """Both values rounded to the noise (wording.values_text), or with the fewest decimals
    alike that read their change (`0.85× → 0.77×` for −9 %, where the noise rounds them to
    `0.8× → 0.8×`)."""
    shown = w.values_text(base, now, unit, noise_pct)
    if not isinstance(base, (int, float)) or not isinstance(now, (int, float)) or not base:
        return shown
    rounded = w.values_rounded(base, now, unit, noise_pct)
    if rounded is not None and _agrees(rounded, base, now):
        return shown
    for places in range(6):
        said = [round(float(v), places) for v in (base, now)]
        if _agrees((said[0], said[1]), base, now):
            break
    texts = [f"{float(v):,.{places}f}" for v in (base, now)]
    suffix = w.TIMED_SUFFIXES[unit]
    return f"{texts[0]}{suffix} → {texts[1]}{suffix}"


def _agrees(shown: tuple[float, float], base: float, now: float) -> bool:
    """Whether the rounded values show the change within a fifth of it (or one point)."""
    a, b = shown
    if not a:
        return False
    change, said = (now - base) / base * 100, (b - a) / a * 100
    return abs(said - change) <= max(1.0, abs(change) / 5)
