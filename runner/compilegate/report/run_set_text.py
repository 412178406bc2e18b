"""A run set for the terminal: the comment's first screen as text, then per version what the
comment keeps behind <details> — every variant, every gate row with its message, the graph
breaks and recompiles, the commands that reproduce it. No line is wider than 100 columns,
except a command, which must stay one line to be copied.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gate.run_set import RunSetVerdict
from ..gate.verdict import sorted_by_severity
from ..results.model import Step
from . import wording as w
from .details import (
    VARIANT_HEADER,
    bounds,
    decisions,
    drop_constant_columns,
    failures,
    gate_rows,
    reproduce_commands,
    variant_rows,
)
from .first_screen import FirstScreen, fit_table
from .links import LinkContext
from .note_words import note_words
from .row_cells import ROW_HEADER
from .row_words import row_message
from .tables import printable, wrap


def render_run_set_text(run_set: RunSetVerdict, links: LinkContext | None = None) -> str:
    lines = [FirstScreen.of(run_set, links).text()]
    for version in run_set.versions:
        source = version.source if len(version.source) <= 90 else "…" + version.source[-89:]
        lines += ["", f"== {version.label}", f"result: {source}"]
        if version.document is None:
            lines += wrap(f"error: {version.error}")
            continue
        steps = version.document.steps
        header, body, said = drop_constant_columns(VARIANT_HEADER, variant_rows(steps))
        lines += ["Every variant:", *fit_table([header, *body])]
        if said:
            lines += wrap("  same on every row: " + "; ".join(said))
        for name, text in decisions(steps):
            lines += wrap(f"- {name}: {text}", hanging="    ")
        for name, text in bounds(steps):
            lines += wrap(f"- {name}, what bounds it: {text}", hanging="    ")
        for where, error in failures(steps):
            lines += wrap(f"- {where} failed: {error}")
        if version.verdict is not None:
            for note in version.verdict.notes:
                lines += wrap(f"note: {note_words(note)}")
            lines += [
                "Every gate row:",
                *fit_table([(*ROW_HEADER, "verdict"), *gate_rows(version)]),
            ]
            for row in sorted_by_severity(version.verdict.verdicts):
                if row.verdict != "pass":
                    lines += wrap(f"- {w.row_subject(row)}: {row_message(row)}")
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
                out += wrap(f"- {where}: {kind} at {at}: {site.reason}")
            for event in variant.recompiles.events if variant.recompiles is not None else ():
                at = f"{event.file}:{event.line}"
                what = f"recompile of {event.function} at {at}"
                out += wrap(f"- {where}: {what}: {event.reason}")
    return ["Graph breaks and recompiles:", *out] if out else []
