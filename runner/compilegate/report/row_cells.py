"""A gate row in the reader's terms, the same in the first screen, the details and the
terminal: where, what, baseline → now (in the reader's unit, rounded to the noise), change,
limit and noise.

One rule for a row's numbers: the change beside the values is the change of those values,
and the values carry the digits that show it (`0.85× → 0.77×`, never `0.8× → 0.8× −9 %`).
A step time the gate judged in yardstick units (a fixed workload timed beside the step, so a
slower runner does not read as a slower step) is shown in the milliseconds measured, with
their own change, and the judged change names its unit:

    9.51 ms → 9.94 ms (+4.5 %)    +27 % per yardstick    +5 %

A row about a whole step or variant says its verdict; why is said under the table, full
width (the first screen's reasons; the details' messages, report/version_said.py), so the
row's cells never word its sentence.

Compile work is several counts judged together; its row names the count it shows
(`graphs 1 → 5`), the first in torch's order (graphs, FX nodes, guards, …) that crossed
the limit, so a reader can tell what the number counts.

The numbers are rounded here too, and only here: each value to what its noise supports
(values_text), the change to the noise it was judged on (change_text), the limit
(threshold_text) and the noise itself (noise_words)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from ..gate.run_set import VersionOutcome
from ..gate.verdict import MetricVerdict
from ..results.formats import format_bytes
from . import wording as w
from .row_words.compile_cost import raw_change_pct
from .row_words.too_few_pairs import TOO_FEW
from .row_words.worded import WordedRow
from .wording import plain_torch

ROW_HEADER = ("where", "what", "baseline → now", "change", "limit", "noise")
YARDSTICK_UNIT = "yardsticks"
PER_YARDSTICK = "per yardstick"


@dataclass(frozen=True)
class RowCells:
    """A gate row's cells (ROW_HEADER, `cells()`), and what another column of a table may
    say again: the row's icon (❌; ⚠️, also for a pass that needs a look; or none) and
    `named`, its metric's name (for a step or variant row, its `what`)."""

    subject: str
    what: str
    values: str
    change: str
    limit: str
    noise: str
    icon: str
    named: str

    def cells(self) -> tuple[str, ...]:
        return (self.subject, self.what, self.values, self.change, self.limit, self.noise)


def row_cells(
    version: VersionOutcome, row: MetricVerdict, worded: WordedRow, several: bool
) -> tuple[str, ...]:
    """The row's cells (ROW_HEADER), `torch` first when `several`."""
    torch = plain_torch(version.torch) if version.torch else version.label
    return ((torch,) if several else ()) + said_cells(row, worded).cells()


def said_cells(row: MetricVerdict, worded: WordedRow) -> RowCells:
    """The row's cells, said once, from the row and what its family said of it
    (row_words.worded_row). A step or variant row leaves why it failed to the reasons under
    the table, which have the full width for it."""
    # the count a compile-work row shows; its words (wording.py); what its facts give its
    # numbers (row_words/): a look, the milliseconds behind yardsticks, too few pairs
    count_name, row = _leading_count(row, worded) if row.metric == "compile_work" else ("", row)
    subject, verdict_word = w.row_subject(row), w.verdict_word(row.verdict)
    verdict_icon, metric = w.icon(row.verdict), w.metric_name(row.metric)
    # ⚠️ also for a passing row whose exact counts moved (row_words/moved_counts.py)
    icon = verdict_icon or (w.LOOK_ICON if worded.look is not None else "")
    raw = worded.raw_ms if row.unit == YARDSTICK_UNIT else None
    too_few = worded.too_few_pairs is not None
    values = "-"
    if row.metric in ("step", "variant"):  # about the whole step or variant: why is below
        what = f"{verdict_icon} {verdict_word}".strip()
        named = what
    else:
        what = f"{icon} {metric}"
        named = metric
        if row.baseline is not None or row.current is not None:
            values = _values(row, raw)
            values = f"{count_name} {values}" if count_name else values
        if row.change is None and row.verdict != "pass":
            what += f": {verdict_word}"
        what = what.strip()
    return RowCells(
        subject,
        what,
        values,
        judged_change(row),
        threshold_text(row),
        _noise(row, too_few),
        icon,
        named,
    )


def _leading_count(row: MetricVerdict, worded: WordedRow) -> tuple[str, MetricVerdict]:
    """(`graphs`, the row with that count's values and change): the first count past the
    limit (row_words.compile_cost.counts_past_limit), else the count whose values the gate
    gave the row; ("", row) when the row lists none."""
    past = worded.past_limit
    if past is not None:
        count = past.counts[0]
        change = raw_change_pct(count.before, count.after)
        return count.name, dataclasses.replace(
            row, baseline=count.before, current=count.after, change=change
        )
    listed = worded.count_shown
    return (listed.name, row) if listed is not None else ("", row)


def _noise(row: MetricVerdict, too_few: bool) -> str:
    """`±7.4 %` (noise_words); `too_few`: its pairs too few to judge (too_few_pairs)."""
    if row.unit in (None, "count", "status") or row.metric in ("step", "variant"):
        return "-"  # counts and statuses are exact
    if too_few:
        return TOO_FEW  # a ± from one or two pairs means nothing
    judged = row.change_unit == "pct" and row.threshold is not None
    return noise_words(row.noise_pct, row.decidable if judged else None)


def judged_change(row: MetricVerdict) -> str:
    """The change the gate judged: `+27 % per yardstick` for a step time judged in yardstick
    units (the values beside it are milliseconds, with their own change), else `+27 %`."""
    text = change_text(row)
    if row.unit == YARDSTICK_UNIT and row.change is not None:
        return f"{text} {PER_YARDSTICK}"
    return text


def reader_values(row: MetricVerdict, worded: WordedRow) -> str:
    """`baseline → now` in the reader's unit with the digits their change needs: rounded to
    the noise, unless that rounds the change away (then the fewest decimals that show it).
    A yardstick-unit step time: the milliseconds measured and their own change,
    `9.51 ms → 9.94 ms (+4.5 %)`."""
    return _values(row, worded.raw_ms if row.unit == YARDSTICK_UNIT else None)


def _values(row: MetricVerdict, raw: tuple[float, float, float] | None) -> str:
    """reader_values, given the milliseconds behind a yardstick-unit row (WordedRow.raw_ms)."""
    if raw is not None:
        base, now, change = raw
        places = 0 if abs(change) >= 10 else 1
        values = _with_digits(base, now, "ms", row.noise_pct)
        return f"{values} ({change:+.{places}f} %)".replace("-", "−")
    unit = row.unit or ""
    if unit not in TIMED_SUFFIXES:
        return values_text(row.baseline, row.current, row.unit, row.noise_pct)
    return _with_digits(row.baseline, row.current, unit, row.noise_pct)


def _with_digits(base: object, now: object, unit: str, noise_pct: float | None) -> str:
    """Both values rounded to the noise (wording.values_text), or with the fewest decimals
    alike that read their change (`0.85× → 0.77×` for −9 %, where the noise rounds them to
    `0.8× → 0.8×`)."""
    shown = values_text(base, now, unit, noise_pct)
    if not isinstance(base, (int, float)) or not isinstance(now, (int, float)) or not base:
        return shown
    rounded = values_rounded(base, now, unit, noise_pct)
    if rounded is not None and _agrees(rounded, base, now):
        return shown
    for places in range(6):
        said = [round(float(v), places) for v in (base, now)]
        if _agrees((said[0], said[1]), base, now):
            break
    texts = [f"{float(v):,.{places}f}" for v in (base, now)]
    suffix = TIMED_SUFFIXES[unit]
    return f"{texts[0]}{suffix} → {texts[1]}{suffix}"


def _agrees(shown: tuple[float, float], base: float, now: float) -> bool:
    """Whether the rounded values show the change within a fifth of it (or one point)."""
    a, b = shown
    if not a:
        return False
    change, said = (now - base) / base * 100, (b - a) / a * 100
    return abs(said - change) <= max(1.0, abs(change) / 5)


# -- a row's numbers, rounded to what their noise supports --------------------------------

# A row's noise too wide for its threshold cannot decide it (MetricVerdict.decidable);
# a row without a threshold, beyond this 95 % half-width.
UNJUDGEABLE_NOISE_PCT = 50.0
TOO_NOISY = "too noisy to judge"


def decimals_for(uncertainty: float | None, *, least: int = 0, most: int = 3) -> int:
    """Decimal places whose last digit is about the size of `uncertainty`."""
    if uncertainty is None or not math.isfinite(uncertainty) or uncertainty <= 0:
        return most
    return max(least, min(most, -math.floor(math.log10(uncertainty))))


def noise_words(noise_pct: float | None, decidable: bool | None = None) -> str:
    """`±7.4 %`, `±46 %`, `±46 % (too noisy to judge)`, or `not measured`. Too noisy is
    what the gate said (`decidable` False: too wide to decide the row's threshold, and the
    change not beyond twice the noise), so such a row is never a failure; for a row
    without a threshold (`decidable` None), beyond ±50 %."""
    if noise_pct is None:
        return "not measured"
    number = f"±{noise_pct:.1f} %" if noise_pct < 10 else f"±{noise_pct:.0f} %"
    if decidable is None:
        too_noisy = noise_pct >= UNJUDGEABLE_NOISE_PCT
    else:
        too_noisy = not decidable
    if too_noisy:
        return f"{number} ({TOO_NOISY})"
    return number


def change_text(row: MetricVerdict) -> str:
    """`+270 %`, `−8.6 %`, `+2`, or `-`, rounded to the noise the row was judged on."""
    if row.change is None:
        return "-"
    if row.change_unit != "pct":
        return f"{row.change:+.0f}"
    noise = row.noise_pct
    places = 0 if abs(row.change) >= 100 or (noise is not None and noise >= 2) else 1
    return f"{row.change:+.{places}f} %".replace("-", "−")


def threshold_text(row: MetricVerdict) -> str:
    """What a row's change was allowed to be: `−5 %` (a drop), `+25 %` (growth), `+0` (a
    count that may not grow: said like the change beside it, `+1`, and narrow enough that
    a first-screen table with a torch column does not wrap)."""
    if row.direction == "must_pass":
        return "must pass"
    if row.threshold is None:
        return "-"
    if row.change_unit != "pct":
        return f"+{row.threshold:g}"
    sign = "−" if row.direction == "higher_is_better" else "+"
    return f"{sign}{row.threshold:g} %"


def value_text(value: Any, unit: str | None, noise_pct: float | None = None) -> str:
    """A row value in the reader's unit, rounded to its noise: `6.9 ms`, `59.9 s`, `3`."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    number = float(value)
    if unit in TIMED_SUFFIXES:
        places = _places_shown(number, unit, noise_pct)
        said = f"{number:.3g}" if places is None else f"{number:.{places}f}"
        return f"{said}{TIMED_SUFFIXES[unit]}"
    if unit == "bytes":
        return format_bytes(number)
    if unit == "count":
        return f"{number:.0f}"
    return f"{number:g}"


# The units value_text rounds to decimal places, and what it writes after the number.
TIMED_SUFFIXES = {"x": "×", "ms": " ms", "s": " s"}


def _places_shown(number: float, unit: str | None, noise_pct: float | None) -> int | None:
    """The decimal places value_text shows `number` with, in a unit of TIMED_SUFFIXES: to
    its noise; None: three significant digits (milliseconds under 10 without a noise)."""
    if unit == "x":
        spread = abs(number) * noise_pct / 100 if noise_pct else None
        return decimals_for(spread, least=1, most=2)
    if unit == "ms":
        if noise_pct:
            return decimals_for(abs(number) * noise_pct / 100, most=3)
        return None if number < 10 else 1
    return 1 if number < 100 else 0


def _joint_places(base: Any, cur: Any, unit: str | None, noise_pct: float | None) -> int | None:
    """The decimal places values_text shows both sides with, alike (a speedup or a time
    with its noise: to the noise of the larger); None where each side is rounded alone."""
    numbers = [abs(float(v)) for v in (base, cur) if isinstance(v, (int, float))]
    if unit in ("x", "ms") and noise_pct and numbers:
        spread = max(numbers) * noise_pct / 100
        least = 1 if unit == "x" else 0
        return decimals_for(spread, least=least, most=2 if unit == "x" else 3)
    return None


def values_text(base: Any, cur: Any, unit: str | None, noise_pct: float | None) -> str:
    """`16.2 s → 59.9 s`: both sides rounded alike, to the noise of the larger."""
    places = _joint_places(base, cur, unit, noise_pct)
    if places is not None:
        suffix = TIMED_SUFFIXES[str(unit)]
        shown = [
            f"{float(v):.{places}f}{suffix}" if isinstance(v, (int, float)) else value_text(v, unit)
            for v in (base, cur)
        ]
        return " → ".join(shown)
    return f"{value_text(base, unit, noise_pct)} → {value_text(cur, unit, noise_pct)}"


def values_rounded(
    base: float, cur: float, unit: str, noise_pct: float | None
) -> tuple[float, float] | None:
    """The two numbers values_text shows, as it rounds them (a unit of TIMED_SUFFIXES);
    None where it writes one in exponent notation (three significant digits of a tiny
    number)."""
    places = _joint_places(base, cur, unit, noise_pct)
    if places is not None:
        return round(float(base), places), round(float(cur), places)
    rounded = [_rounded(float(value), unit, noise_pct) for value in (base, cur)]
    if rounded[0] is None or rounded[1] is None:
        return None
    return rounded[0], rounded[1]


def _rounded(number: float, unit: str, noise_pct: float | None) -> float | None:
    places = _places_shown(number, unit, noise_pct)
    if places is not None:
        return round(number, places)
    if not number or not math.isfinite(number):
        return number
    if abs(number) < 1e-4:
        return None  # `1.23e-05`: not a number a reader compares
    return round(number, 2 - math.floor(math.log10(abs(number))))
