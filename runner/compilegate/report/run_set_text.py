"""A run set for the terminal: the comment's first screen as text, then per version what the
comment keeps behind <details> — every variant, every gate row with its message (both as
version_said.py words them for the comment too), the graph breaks and recompiles, the
commands that reproduce it. No line is wider than 100 columns,
except a command, which must stay one line to be copied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..gate.run_set import RunSetVerdict
from ..results.model import Step
from . import wording as w
from .absence_words import recompile_reason_words
from .child_failure_words import error_words
from .compile_time_words import COMPILE_COLUMN
from .first_screen import TEXT_WIDTH, FirstScreen
from .links import LinkContext
from .row_cells import ROW_HEADER
from .tables import drop_constant_columns, fit_table, printable, wrap_words
from .version_said import VARIANT_HEADER, said_version


def render_run_set_text(run_set: RunSetVerdict, links: LinkContext | None = None) -> str:
    lines = [FirstScreen.of(run_set, links).text()]
    for version in run_set.versions:
        source = version.source if len(version.source) <= 90 else "…" + version.source[-89:]
        lines += ["", f"== {version.label}", f"result: {source}"]
        said = said_version(version, run_set)  # None: no document
        if version.document is None or said is None:
            lines += wrap_words(f"error: {w.version_error(version)}", TEXT_WIDTH)
            continue
        steps = version.document.steps
        variants = said.variants
        body_rows = [list(row) for row in variants.rows]
        header, body, same = drop_constant_columns(VARIANT_HEADER, body_rows)
        lines += ["Every variant:", *fit_table([header, *body], TEXT_WIDTH, indent="  ")]
        if same:
            lines += wrap_words("  same on every row: " + "; ".join(same), TEXT_WIDTH)
        if variants.compiled:
            lines += wrap_words(COMPILE_COLUMN, TEXT_WIDTH)
        for name, text in variants.decisions:
            lines += wrap_words(f"- {name}: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in variants.numerics_fallbacks:
            lines += wrap_words(f"- {name}: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in variants.bounds:
            lines += wrap_words(f"- {name}, what bounds it: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in variants.levers:
            lines += wrap_words(f"- {name}, compile from: {text}", TEXT_WIDTH, hanging="    ")
        for name, text in variants.distributed:
            lines += wrap_words(f"- {name}, distributed: {text}", TEXT_WIDTH, hanging="    ")
        for where, error in variants.failures:
            lines += wrap_words(f"- {where} failed: {error}", TEXT_WIDTH)
        if said.judged:
            for note in said.notes:
                lines += wrap_words(f"note: {note}", TEXT_WIDTH)
            rows = [(*ROW_HEADER, "verdict"), *(row.cells for row in said.gate_rows)]
            lines += ["Every gate row:", *fit_table(rows, TEXT_WIDTH, indent="  ")]
            for row in said.gate_rows:
                if row.message is not None:
                    lines += wrap_words(f"- {row.subject}: {row.message}", TEXT_WIDTH)
        lines += _breaks(steps)
        lines += ["Reproduce:", *(f"  {command}" for command in said.reproduce)]
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
                said = recompile_reason_words(event.reason)
                out += wrap_words(f"- {where}: {what}: {said}", TEXT_WIDTH)
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
