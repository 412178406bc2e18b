"""What sits behind `<details>` for each torch version: every variant, every gate row, graph
breaks and recompiles at file:line (linked to the head commit), numerics' worst tensors, the
notes, the environment, and the commands that reproduce the run from a clean checkout. Each
is a section of its own, inside one `<details>` per version (`version_block`), so a closed
comment shows one line per version.

The variants and the gate rows are laid out as version_said.py words them, once for the
comment and the terminal alike; nothing here words a row. Tables drop columns that are the
same on every row and say the value once below, so they fit the 780 px conversation column.
Every string that came from user code or torch goes through report/escape.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..results.model import BreakSite, NumericsStatus, ResultDocument, Step
from . import wording as w
from .absence_words import numerics_said, recompile_reason_words
from .compile_time_words import COMPILE_COLUMN
from .escape import cell, inert, with_code
from .links import LinkContext
from .row_cells import ROW_HEADER
from .tables import drop_constant_columns, markdown_table
from .trend import trend_markdown
from .version_said import VARIANT_HEADER, VariantsSaid, VersionSaid

WORST_TENSORS_SHOWN = 3
SITES_SHOWN = 20


# What each kind of section holds, as the version's summary line lists it.
SECTION_WORDS = {
    "table": "variants",
    "verdicts": "gate rows",
    "trend": "stored runs",
    "breaks": "graph breaks, recompiles",
    "numerics": "numerics",
    "bisect": "find the commit",
    "environment": "environment",
    "reproduce": "reproduce",
}


@dataclass(frozen=True)
class Section:
    kind: str
    text: str
    version: str = ""  # the label of the version it belongs to


def details(kind: str, summary: str, body: str, version: str = "") -> Section:
    return Section(kind, _details_html(summary, body), version)


def _details_html(summary: str, body: str) -> str:
    # Blank lines around the body let GitHub render markdown inside the HTML block.
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def version_block(label: str, sections: Sequence[Section]) -> str:
    """One version's sections inside one `<details>`, its summary naming what they hold."""
    kinds = [SECTION_WORDS.get(s.kind, s.kind) for s in sections]
    summary = f"{inert(label)}: " + ", ".join(dict.fromkeys(kinds))
    return _details_html(summary, "\n\n".join(s.text for s in sections))


def version_details(
    version: VersionOutcome, said: VersionSaid | None, run_set: RunSetVerdict, links: LinkContext
) -> list[Section]:
    """The version's sections: its variants and gate rows as `said` words them
    (version_said.py), the rest from its document."""
    name = inert(version.label)
    if version.document is None or said is None:
        return []
    steps = version.document.steps
    out = [details("table", f"{name}: every variant", variant_table_markdown(said.variants))]
    if version.verdict is not None:
        out.append(details("verdicts", f"{name}: every gate row", gate_rows_markdown(said)))
        trend = trend_markdown(run_set.baseline, version.document)
        if trend:
            out.append(details("trend", f"{name}: step times over the stored runs", trend))
    breaks = _breaks_and_recompiles(steps, links)
    if breaks:
        out.append(
            details("breaks", f"{name}: graph breaks and recompiles ({breaks[0]})", breaks[1])
        )
    numerics = _numerics(steps)
    if numerics:
        out.append(details("numerics", f"{name}: numerics, worst tensors", numerics))
    offer = _bisect_offer(version, said.config, links)
    if offer:
        out.append(details("bisect", f"{name}: find the commit that moved a count", offer))
    out.append(details("environment", f"{name}: environment", _environment(version.document)))
    out.append(details("reproduce", f"{name}: reproduce locally", reproduce(said, run_set)))
    return [Section(s.kind, s.text, version.label) for s in out]


# -- the variant table ----------------------------------------------------------------------


def variant_table_markdown(variants: VariantsSaid) -> str:
    rows = [list(row) for row in variants.rows]
    if not rows:
        return "_No variants measured._"
    header, body, said = drop_constant_columns(VARIANT_HEADER, rows)
    lines = markdown_table(header, [[cell(c) for c in r] for r in body])
    if said:
        lines += ["", inert("Same on every row: " + "; ".join(said) + ".")]
    if variants.compiled:
        lines += ["", COMPILE_COLUMN]
    decided = variants.decisions
    if decided:
        lines += ["", *(f"- {inert(name)}: {inert(text, max_chars=500)}" for name, text in decided)]
    for name, text in variants.numerics_fallbacks:
        lines.append(f"- {inert(name)}: {inert(text, max_chars=500)}")
    for name, text in variants.bounds:
        lines.append(f"- {inert(name)}, what bounds it: {inert(text, max_chars=500)}")
    for name, text in variants.levers:
        lines.append(f"- {inert(name)}, compile from: {inert(text, max_chars=500)}")
    for name, text in variants.distributed:
        lines.append(f"- {inert(name)}, distributed: {inert(text, max_chars=500)}")
    failed = variants.failures
    if failed:
        lines += [
            "",
            *(f"- {inert(where)} failed: {inert(error, max_chars=500)}" for where, error in failed),
        ]
    return "\n".join(lines)


# -- every gate row -------------------------------------------------------------------------


def gate_rows_markdown(said: VersionSaid) -> str:
    notes = [f"> {inert(note, max_chars=500)}" for note in said.notes]
    rows = said.gate_rows
    table = markdown_table((*ROW_HEADER, "verdict"), [[cell(c) for c in r.cells] for r in rows])
    messages = [
        f"- {inert(r.subject)}: {with_code(r.message, max_chars=400)}"
        for r in rows
        if r.message is not None
    ]
    return "\n".join(
        [*notes, *([""] if notes else []), *table, *([""] if messages else []), *messages]
    )


# -- graph breaks, recompiles, numerics -------------------------------------------------------


def _breaks_and_recompiles(steps: Sequence[Step], links: LinkContext) -> tuple[int, str] | None:
    lines = []
    total = 0
    for step in steps:
        for variant in step.variants:
            where = inert(f"{step.name} · {w.variant_name(variant)}")
            sites = variant.graph_breaks.sites if variant.graph_breaks is not None else ()
            for site in sites[:SITES_SHOWN]:
                total += 1
                lines.append(f"- {where}: {_site_line(site, links)}")
            recompiles = variant.recompiles
            for event in recompiles.events[:SITES_SHOWN] if recompiles is not None else ():
                total += 1
                at = _site_link(event.file, event.line, event.origin == "repo", links)
                lines.append(
                    f"- {where}: recompile of {inert(event.function)} at {at}: guard "
                    f"{with_code(recompile_reason_words(event.reason), max_chars=400)}"
                )
            if recompiles is not None and recompiles.limit_hit:
                lines.append(
                    f"- {where}: {w.LOOK_ICON} recompile limit hit: that frame now runs eagerly"
                )
    return (total, "\n".join(lines)) if lines else None


def _site_line(site: BreakSite, links: LinkContext) -> str:
    """`graph break at model.py:24 (caused at layers.py:61): reason`; torch's own are marked."""
    origin = site.origin or ("repo" if site.in_repo else "library")
    kind = "graph break inside torch (not gated)" if origin == "torch" else "graph break"
    text = f"{kind} at {_site_link(site.file, site.line, site.in_repository, links)}"
    cause = site.cause
    if cause is not None and (cause.file, cause.line) != (site.file, site.line):
        cause_in_repo = origin == "repo" and cause.file == site.file
        text += f" (caused at {_site_link(cause.file, cause.line, cause_in_repo, links)})"
    reason = (cause.reason if cause is not None else "") or site.reason
    return f"{text}: {with_code(reason, max_chars=400)}"


def _site_link(file: str, line: int | None, in_repo: bool, links: LinkContext) -> str:
    """`file:line`, linked to the head commit when the file is the repository's."""
    path = file or "?"
    text = inert(f"{path}:{line}" if line is not None else path)
    url = links.blob_url(path, line) if in_repo else None
    return f"[{text}]({url})" if url else text


def _numerics(steps: Sequence[Step]) -> str:
    lines = []
    for step in steps:
        for variant in step.variants:
            numerics = variant.numerics
            if numerics is None or numerics.status not in (
                NumericsStatus.FAIL,
                NumericsStatus.ERROR,
            ):
                continue
            where = inert(f"{step.name} · {w.variant_name(variant)}")
            reason = numerics_said(numerics, variant.distributed)
            lines.append(
                f"- {where}: {inert(numerics.status.value)}"
                + (f": {with_code(reason, max_chars=300)}" if reason else "")
            )
            for worst in (numerics.worst or ())[:WORST_TENSORS_SHOWN]:
                lines.append(
                    f"  - {inert(worst.kind)} {inert(worst.tensor)}: "
                    f"rmse compiled {_number(worst.rmse_compiled, '{:.3g}')} vs eager "
                    f"{_number(worst.rmse_eager, '{:.3g}')}, cosine "
                    f"{_number(worst.cosine, '{:.4f}')}"
                )
    return "\n".join(lines)


def _number(value: Any, fmt: str) -> str:
    return fmt.format(value) if isinstance(value, (int, float)) else "-"


# -- environment and reproduction -------------------------------------------------------------


def _environment(document: ResultDocument) -> str:
    env = document.environment
    fields = (
        ("GPU", env.gpu_name or "none"),
        ("driver", env.driver or "-"),
        ("CUDA", env.cuda or "-"),
        ("torch", env.torch),
        ("Python", env.python),
        ("CPU", env.cpu_model or env.processor),
        ("CPU cores", env.cpu_count),
        ("device", env.device),
        ("commit", env.commit),
        ("Inductor cache", env.inductor_cache),
        ("measured at", document.created_at),
    )
    return "\n".join(
        f"- {name}: {inert(value if value is not None else '-')}" for name, value in fields
    )


def _bisect_offer(version: VersionOutcome, config: str, links: LinkContext) -> str | None:
    """The command that bisects a regressed count (report/bisect_offer.py), when it applies."""
    from .bisect_offer import bisect_offer

    if version.verdict is None:
        return None
    return bisect_offer(version.verdict, links, config)


def reproduce(said: VersionSaid, run_set: RunSetVerdict) -> str:
    lines = said.reproduce
    note = ""
    if run_set.baseline_source:
        note = (
            f"\n\n{inert(run_set.baseline_source)} is the baseline the gate was given. In "
            "GitHub Actions it is the default branch's baseline artifact: "
            "`compilegate baseline fetch --artifact NAME --out baseline.json` downloads it."
        )
    return "```sh\n" + "\n".join(lines) + "\n```" + note
