"""The history in the comment: per step, a small Mermaid line chart (GitHub renders ```mermaid
blocks) of the default branch's stored runs (gate/history.py, oldest first) and this run last:
eager step time and each variant's compiled step time, in milliseconds — the values the gate's
speed rows compare (geometric mean over a run's processes of their fastest iteration). A
reader sees at a glance whether this run sits where the branch has been, or whether the
branch has been drifting for a while.

Mermaid's xychart has no legend, so the lines' colours are fixed (PALETTE) and named under
the chart. At most MAX_LINES lines a chart (eager and the first variants); a step with
fewer than two stored runs has no trend to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results.model import HistoryRun, ResultDocument
from ..results.processes import run_summary
from .escape import inert

MAX_LINES = 4
MIN_STORED_RUNS = 2
PALETTE = (("#1f77b4", "blue"), ("#ff7f0e", "orange"), ("#2ca02c", "green"), ("#d62728", "red"))


def trend_markdown(baseline: ResultDocument | None, document: ResultDocument) -> str | None:
    """One chart per step the baseline keeps a history of (≥ MIN_STORED_RUNS runs); None
    when no step has one."""
    if baseline is None:
        return None
    charts = []
    for step in document.steps:
        old = baseline.step(step.name)
        history = list(old.history or ()) if old is not None else []
        current = run_summary(step)
        if len(history) < MIN_STORED_RUNS or current is None:
            continue
        chart = step_chart(step.name, [*history, current])
        if chart:
            charts.append(chart)
    return "\n\n".join(charts) if charts else None


def step_chart(name: str, runs: Sequence[HistoryRun]) -> str | None:
    """The chart of one step over `runs` (the last one this run)."""
    lines = _lines(runs)
    if not lines:
        return None
    values = [v for _, series in lines for v in series if v is not None]
    top = max(values) * 1.15
    labels = ", ".join(f'"{i}"' for i in range(1, len(runs))) + ', "this run"'
    colours = ", ".join(colour for colour, _ in PALETTE[: len(lines)])
    body = [
        "```mermaid",
        f'%%{{init: {{"themeVariables": {{"xyChart": {{"plotColorPalette": "{colours}"}}}}}}}}%%',
        "xychart-beta",
        f'    title "{_label(name)}: step time over the stored runs"',
        f"    x-axis [{labels}]",
        f'    y-axis "ms" 0 --> {top:.3g}',
    ]
    for _, series in lines:
        # A run that did not measure a line repeats the run before it (Mermaid needs a
        # number per point); the legend says how many runs a line has.
        body.append(f"    line [{', '.join(f'{v:.4g}' for v in _filled(series))}]")
    body.append("```")
    legend = " · ".join(
        f"{word}: {inert(label)} ({sum(v is not None for v in series)} runs)"
        for (label, series), (_, word) in zip(lines, PALETTE)
    )
    stored = len(runs) - 1
    return "\n".join(body) + (
        f"\n\n_{inert(name)}, {stored} stored runs of the default branch, then this run — "
        f"{legend}; ms: each run's fastest iterations, geometric mean over its processes._"
    )


def _lines(runs: Sequence[HistoryRun]) -> list[tuple[str, list[float | None]]]:
    out: list[tuple[str, list[float | None]]] = [("eager", [_ms(r.eager_step_ms) for r in runs])]
    variants: list[str] = []
    for run in runs:
        for vid in run.variants or {}:
            if vid not in variants:
                variants.append(vid)
    for vid in variants[: MAX_LINES - 1]:
        out.append(
            (
                f"{vid} compiled",
                [_ms(((r.variants or {}).get(vid) or {}).get("compiled_step_ms")) for r in runs],
            )
        )
    return [(label, series) for label, series in out if series[-1] is not None]


def _filled(series: Sequence[float | None]) -> list[float]:
    known = [v for v in series if v is not None]
    out, last = [], known[0]
    for value in series:
        last = value if value is not None else last
        out.append(last)
    return out


def _ms(value: float | None) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _label(name: str) -> str:
    """A step name inside Mermaid's quoted title: no quotes, brackets or backticks."""
    return "".join(c for c in name if c.isalnum() or c in " _-.:/")[:60]
