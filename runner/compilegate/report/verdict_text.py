"""Verdicts for people: a compact plain-text table, or the same as GitHub-flavoured markdown.

Both start with one headline carrying the overall verdict and the exit code, then the notes
(environment and policy differences), then one row per verdict — what fails the job
first, then inconclusive, improvements, the rest — then the message of every row that is
not a plain pass (new graph-break sites are named there), and, when the job fails on
something a refreshed baseline would accept, the command that refreshes it.
"""

from __future__ import annotations

from ..gate.verdict import (
    REFRESH_ADVICE,
    SEVERITY_ORDER,
    MetricVerdict,
    VerdictReport,
    format_change,
    format_noise,
    format_threshold,
    format_value,
    sorted_by_severity,
)
from .escape import cell, inert
from .tables import markdown_table, text_table

COLUMNS = ("step", "variant", "metric", "baseline", "current", "change", "threshold", "noise")
HEADER = (*COLUMNS, "verdict")
# Said once in the headline, so nobody mistakes a green job for "nothing to look at".
OVERALL_HINTS = {
    "regression": "the job fails",
    "error": "a step or variant failed in this run; the job fails",
    "inconclusive": (
        "changes beyond a threshold but inside the measured noise; the job does not fail: "
        "rerun with more iterations or rounds to decide"
    ),
    "missing": "a gated metric was not measured or not a number; the job fails",
    "removed": "a step or variant of the baseline is gone; the job fails",
    "incomparable": "part of the baseline could not be compared (see why); the job fails",
    "new": "nothing in the baseline to compare with yet",
}
LOUD_VERDICTS = ("regression", "error", "missing", "removed", "incomparable", "inconclusive")


def verdict_headline(report: VerdictReport) -> str:
    """`compilegate: REGRESSION (exit 1): 1 regression, 2 inconclusive, 14 pass — the job fails`."""
    counts = ", ".join(f"{count} {verdict}" for verdict, count in _severity_counts(report) if count)
    hint = OVERALL_HINTS.get(report.overall)
    versions = _versions(report)
    return (
        f"compilegate: {report.overall.upper()} (exit {report.exit_code}): {counts or 'no steps'}"
        + (f"; {versions}" if versions else "")
        + (f" — {hint}" if hint else "")
    )


def render_verdict_table(report: VerdictReport, *, include_pass: bool = True) -> str:
    """The headline, notes, an aligned table and the messages worth reading."""
    rows = _visible_rows(report, include_pass)
    lines = [verdict_headline(report)]
    lines.extend(f"note: {note}" for note in report.notes)
    if rows:
        lines.append("")
        lines.extend(text_table([HEADER, *(_cells(row, loud=True) for row in rows)]))
    details = _details(rows)
    if details:
        lines.append("")
        lines.extend(f"- {where}: {message}" for where, message in details)
    if report.failing_refresh_command:
        lines.extend(("", f"{REFRESH_ADVICE}: {report.failing_refresh_command}"))
    return "\n".join(lines) + "\n"


def render_verdict_markdown(report: VerdictReport, *, include_pass: bool = True) -> str:
    """The same content as a GitHub-flavoured markdown table (for the PR comment)."""
    rows = _visible_rows(report, include_pass)
    lines = [f"**{inert(verdict_headline(report))}**"]
    if report.notes:
        lines.append("")
        lines.extend(f"> {inert(note)}" for note in report.notes)
    if rows:
        lines.append("")
        body = []
        for row in rows:
            cells = [cell(text) for text in _cells(row, loud=False)]
            if row.verdict in LOUD_VERDICTS:
                cells[-1] = f"**{cells[-1]}**"
            body.append(cells)
        lines.extend(markdown_table(HEADER, body))
    details = _details(rows)
    if details:
        lines.append("")
        lines.extend(f"- {inert(where)}: {inert(message)}" for where, message in details)
    if report.failing_refresh_command:
        lines.extend(("", f"{REFRESH_ADVICE}: `{report.failing_refresh_command}`"))
    return "\n".join(lines) + "\n"


def _visible_rows(report: VerdictReport, include_pass: bool) -> list[MetricVerdict]:
    rows = sorted_by_severity(report.verdicts)
    return rows if include_pass else [row for row in rows if row.verdict != "pass"]


def _cells(row: MetricVerdict, *, loud: bool) -> tuple[str, ...]:
    verdict = row.verdict.upper() if loud and row.verdict in LOUD_VERDICTS else row.verdict
    return (
        row.step,
        row.variant or "-",
        row.metric,
        format_value(row.baseline, row.unit),
        format_value(row.current, row.unit),
        format_change(row.change, row.change_unit),
        format_threshold(row.threshold, row.change_unit),
        format_noise(row.noise_pct),
        verdict,
    )


def _details(rows: list[MetricVerdict]) -> list[tuple[str, str]]:
    return [
        (f"{row.step}/{row.variant}" if row.variant else row.step, row.message)
        for row in rows
        if row.verdict != "pass"
    ]


def _severity_counts(report: VerdictReport) -> list[tuple[str, int]]:
    counts = report.counts()
    return [(verdict, counts[verdict]) for verdict in SEVERITY_ORDER]


def _versions(report: VerdictReport) -> str:
    base, cur = report.baseline, report.current
    hardware = cur.hardware() if cur.device or cur.gpu_name else ""
    if base.torch == cur.torch:
        torch = f"torch {cur.torch}" if cur.torch else ""
    else:
        torch = f"torch {base.torch} (baseline) → {cur.torch}"
    return ", ".join(part for part in (torch, hardware) if part)
