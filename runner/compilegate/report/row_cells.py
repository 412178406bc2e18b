"""A gate row in the reader's terms, the same in the first screen, the details and the
terminal: where, what, baseline → now (in the reader's unit, rounded to the noise), change,
limit and noise."""

from __future__ import annotations

import re

from ..gate.run_set import VersionOutcome
from ..gate.verdict import MetricVerdict
from . import wording as w
from .wording import plain_torch

ROW_HEADER = ("where", "what", "baseline → now", "change", "limit", "noise")
_RAW_MS = re.compile(r"raw ([0-9.]+) ms → ([0-9.]+) ms")


def row_cells(version: VersionOutcome, row: MetricVerdict, several: bool) -> tuple[str, ...]:
    values = "-"
    if row.metric in ("step", "variant"):  # about the whole step or variant: say why
        what = f"{w.icon(row.verdict)} {w.verdict_word(row.verdict)}"
        values = row.message if len(row.message) <= 160 else row.message[:159] + "…"
    else:
        what = f"{w.icon(row.verdict)} {w.metric_name(row.metric)}"
        if row.baseline is not None or row.current is not None:
            values = w.values_text(*_reader_values(row), row.noise_pct)
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
