"""A run set for the terminal: the comment's first screen as text, then per version what the
comment keeps behind <details> — every variant, every gate row with its message, the graph
breaks and recompiles, the commands that reproduce it. No line is wider than 100 columns,
except a command, which must stay one line to be copied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..gate.run_set import RunSetVerdict
from ..gate.verdict import sorted_by_severity
from ..results.model import Step
from . import wording as w
from .child_failure_words import error_words
from .compile_time_words import COMPILE_COLUMN
from .details import (
    COMPILE_AT,
    VARIANT_HEADER,
    bounds,
    decisions,
    distributed,
    drop_constant_columns,
    failures,
    gate_rows,
    levers,
    numerics_fallbacks,
    reproduce_commands,
    variant_rows,
)
from .first_screen import TEXT_WIDTH, FirstScreen
from .links import LinkContext
from .note_words import note_words
from .row_cells import ROW_HEADER
from .row_words import row_message
from .tables import fit_table, printable, wrap_words


def render_run_set_text(run_set: RunSetVerdict, links: LinkContext | None = None) -> str:
    lines = [FirstScreen.of(run_set, links).text()]
    for version in run_set.versions:
        source = version.source if len(version.source) <= 90 else "…" + version.source[-89:]
        lines += ["", f"== {version.label}", f"result: {source}"]
        if version.document is None:
            lines += wrap_words(f"error: {w.version_error(version)}", TEXT_WIDTH)
            continue
        steps = version.document.steps
        body_rows = variant_rows(steps)
        header, body, said = drop_constant_columns(VARIANT_HEADER, body_rows)
        lines += ["Every variant:", *fit_table([header, *body], TEXT_WIDTH, indent="  ")]
        if said:
            lines += wrap_words("  same on every row: " + "; ".join(said), TEXT_WIDTH)
        if any(row[COMPILE_AT] != "-" for row in body_rows):
            lines += wrap_words(COMPILE_COLUMN, TEXT_WIDTH)
        for name, text in decisions(steps):
            lines += wrap_words(f"- {name}: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in numerics_fallbacks(steps):
            lines += wrap_words(f"- {name}: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in bounds(steps):
            lines += wrap_words(f"- {name}, what bounds it: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in levers(steps):
            lines += wrap_words(f"- {name}, compile from: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in distributed(steps):
            lines += wrap_words(f"- {name}, distributed: {text}", TEXT_WIDTH, hanging="    ")
        for where, error in failures(steps):
            lines += wrap_words(f"- {where} failed: {error}", TEXT_WIDTH)
        if version.verdict is not None:
            for note in version.verdict.notes:
                lines += wrap_words(f"note: {note_words(note)}", TEXT_WIDTH)
            lines += [
                "Every gate row:",
                *fit_table(
                    [(*ROW_HEADER, "verdict"), *gate_rows(version)], TEXT_WIDTH, indent="  "
                ),
            ]
            for row in sorted_by_severity(version.verdict.verdicts):
                if row.verdict != "pass":
                    lines += wrap_words(f"- {w.row_subject(row)}: {row_message(row)}", TEXT_WIDTH)
        lines += _breaks(steps)
        lines += [
            "Reproduce:",
            *(f"  {command}" for command in reproduce_commands(version, run_set)),
        ]
    return printable("\n".join(lines) + "\n")


def _breaks(steps: Sequence[Step]) -> list[str]:
    out = []
    for step in steps:
        for variant in step.variants:
            where = f"{step.name} · {w.variant_name(variant)}"
            for site in variant.graph_breaks.sites if variant.graph_breaks is not None else ():
                at = f"{site.file}:{site.line}"
                kind = "graph break inside torch (not gated)"
                if (site.origin or ("repo" if site.in_repo else "library")) != "torch":
                    kind = "graph break"
                out += wrap_words(f"- {where}: {kind} at {at}: {site.reason}", TEXT_WIDTH)
            for event in variant.recompiles.events if variant.recompiles is not None else ():
                at = f"{event.file}:{event.line}"
                what = f"recompile of {event.function} at {at}"
                out += wrap_words(f"- {where}: {what}: {event.reason}", TEXT_WIDTH)
    return ["Graph breaks and recompiles:", *out] if out else []


_MISSING_MODULE = re.compile(r"No module named '([A-Za-z0-9_.]{1,100})'")


def requirements_hint(run_set: RunSetVerdict) -> str | None:
    """One line for a matrix run given no --requirements whose step could not import a
    module: each version's environment holds torch and nothing else of the repository's
    (issue 54, finding 7). None when no step failed so."""
    for version in run_set.versions:
        if version.document is None:
            errors = [w.version_error(version) or ""]
        else:
            errors = [
                error or ""
                for step in version.document.steps
                for error in (
                    error_words(step.error, step.failure),
                    *(error_words(v.error, v.failure) for v in step.variants),
                )
            ]
        for error in errors:
            found = _MISSING_MODULE.search(error)
            if found:
                return (
                    f"hint: {version.label}: the step could not import {found.group(1)!r}: "
                    "each version's environment has torch and nothing else of the "
                    "repository's; give its requirements file with --requirements FILE "
                    "(installed beside each torch, docker or venv)"
                )
    return None
