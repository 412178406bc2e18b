"""What sits behind `<details>` for each torch version: every variant, every gate row, graph
breaks and recompiles at file:line (linked to the head commit), numerics' worst tensors, the
notes, the environment, and the commands that reproduce the run from a clean checkout. Each
is a section of its own, inside one `<details>` per version (`version_block`), so a closed
comment shows one line per version.

Tables drop columns that are the same on every row and say the value once below, so they fit
the 780 px conversation column. Every string that came from user code or torch goes through
report/escape.py.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import sorted_by_severity
from ..results.formats import format_bytes
from ..results.model import (
    BreakSite,
    Environment,
    NumericsStatus,
    ResultDocument,
    Step,
    Variant,
)
from . import wording as w
from .child_failure_words import error_words
from .compile_time_words import COMPILE_COLUMN
from .decision_words import decision_sentence
from .distributed_words import distributed_sentence
from .escape import cell, inert, with_code
from .lever_words import lever_sentence
from .links import LinkContext
from .note_words import note_words
from .row_cells import ROW_HEADER, row_cells
from .row_words import row_message
from .row_words.looks import passes_with_a_look
from .row_words.numerics_reference import numerics_cell
from .row_words.numerics_reference import step_notes as numerics_notes
from .speeds import variant_pays_off, variant_speed
from .step_bound_words import bound_sentence
from .tables import markdown_table
from .trend import trend_markdown

WORST_TENSORS_SHOWN = 3
SITES_SHOWN = 20
VARIANT_HEADER = (
    "step · variant",
    "compiled vs eager",
    "compile",
    "pays off after",
    "graph breaks, recompiles",
    "numerics",
    "peak memory",
)
COMPILE_AT = VARIANT_HEADER.index("compile")
_SAFE_ARG = re.compile(r"^[A-Za-z0-9_./+=-]+$")


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
    version: VersionOutcome, run_set: RunSetVerdict, links: LinkContext
) -> list[Section]:
    name = inert(version.label)
    if version.document is None:
        return []
    steps = version.document.steps
    out = [details("table", f"{name}: every variant", variant_table_markdown(steps))]
    if version.verdict is not None:
        out.append(details("verdicts", f"{name}: every gate row", gate_rows_markdown(version)))
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
    offer = _bisect_offer(version, links)
    if offer:
        out.append(details("bisect", f"{name}: find the commit that moved a count", offer))
    out.append(details("environment", f"{name}: environment", _environment(version.document)))
    out.append(details("reproduce", f"{name}: reproduce locally", reproduce(version, run_set)))
    return [Section(s.kind, s.text, version.label) for s in out]


# -- the variant table ----------------------------------------------------------------------


def variant_rows(steps: Sequence[Step]) -> list[list[str]]:
    rows = []
    for step in steps:
        if step.failed and not step.variants:
            rows.append([step.name, "failed (below)", *["-"] * 5])
        for variant in step.variants:
            rows.append(_variant_row(step, variant))
    return rows


def decisions(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step, the decision in full: decision_words.py) for every step that has one."""
    return _sentences(steps, decision_sentence)


def bounds(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step, what bounds it) for every step whose recommendation says (step_bound_words)."""
    return _sentences(steps, bound_sentence)


def numerics_fallbacks(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step · variants, why its numerics had no float64 reference and what they compared
    instead) for every such check (row_words/numerics_reference.py)."""
    return [
        (f"{step.name} · {ids}", words)
        for step in steps
        if not step.failed
        for ids, words in numerics_notes(step)
    ]


def levers(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step, what each compile lever cost) for every step that measured one (lever_words)."""
    return _sentences(steps, lever_sentence)


def distributed(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step, how its ranks ran and compiled) for every distributed step (distributed_words)."""
    return _sentences(steps, distributed_sentence)


def _sentences(
    steps: Sequence[Step], sentence_of: Callable[[Step], str | None]
) -> list[tuple[str, str]]:
    """(step, its sentence) for every step that did not fail and has one."""
    found = ((step.name, None if step.failed else sentence_of(step)) for step in steps)
    return [(name, sentence) for name, sentence in found if sentence]


def failures(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(where, error) for every step and variant that failed to run."""
    out = []
    for step in steps:
        if step.failed and not step.variants:
            out.append((step.name, error_words(step.error, step.failure) or "error"))
        for variant in step.variants:
            if variant.failed:
                said = error_words(variant.error, variant.failure) or "error"
                out.append((f"{step.name} · {w.variant_name(variant)}", said))
    return out


def _variant_row(step: Step, variant: Variant) -> list[str]:
    name = f"{step.name} · {w.variant_name(variant)}"
    if variant.failed:
        return [name, "failed (below)", *["-"] * 5]
    speed = variant_speed(step, variant)
    compile_s = variant.compile_s
    breaks = variant.graph_breaks.count if variant.graph_breaks is not None else "-"
    recompiles = variant.recompiles.count if variant.recompiles is not None else "-"
    peak = variant.peak_bytes
    return [
        name,
        f"{speed.text()}: {speed.words()}" if speed else "-",
        f"{compile_s:.1f} s" if compile_s is not None else "-",
        variant_pays_off(step, variant, speed),
        f"{breaks}, {recompiles}",
        numerics_cell(variant.numerics),
        "n/a (CPU)" if peak is None else format_bytes(peak),
    ]


def drop_constant_columns(
    header: Sequence[str], rows: list[list[str]], keep: int = 2
) -> tuple[list[str], list[list[str]], list[str]]:
    """Leave out columns (after the first `keep`) whose value is the same on every row; the
    third item says each left-out value once (`numerics: pass on every row`)."""
    if len(rows) < 2:
        return list(header), rows, []
    columns = range(len(header))
    constant = [i for i in columns if i >= keep and len({r[i] for r in rows}) == 1]
    said = [f"{header[i]}: {rows[0][i]}" for i in constant]
    kept = [i for i in columns if i not in constant]
    return [header[i] for i in kept], [[r[i] for i in kept] for r in rows], said


def variant_table_markdown(steps: Sequence[Step]) -> str:
    rows = variant_rows(steps)
    if not rows:
        return "_No variants measured._"
    header, body, said = drop_constant_columns(VARIANT_HEADER, rows)
    lines = markdown_table(header, [[cell(c) for c in r] for r in body])
    if said:
        lines += ["", inert("Same on every row: " + "; ".join(said) + ".")]
    if any(row[COMPILE_AT] != "-" for row in rows):
        lines += ["", COMPILE_COLUMN]
    decided = decisions(steps)
    if decided:
        lines += ["", *(f"- {inert(name)}: {inert(text, max_chars=500)}" for name, text in decided)]
    for name, text in numerics_fallbacks(steps):
        lines.append(f"- {inert(name)}: {inert(text, max_chars=500)}")
    for name, text in bounds(steps):
        lines.append(f"- {inert(name)}, what bounds it: {inert(text, max_chars=500)}")
    for name, text in levers(steps):
        lines.append(f"- {inert(name)}, compile from: {inert(text, max_chars=500)}")
    for name, text in distributed(steps):
        lines.append(f"- {inert(name)}, distributed: {inert(text, max_chars=500)}")
    failed = failures(steps)
    if failed:
        lines += [
            "",
            *(f"- {inert(where)} failed: {inert(error, max_chars=500)}" for where, error in failed),
        ]
    return "\n".join(lines)


# -- every gate row -------------------------------------------------------------------------


def gate_rows(version: VersionOutcome) -> list[list[str]]:
    assert version.verdict is not None
    rows = []
    for row in sorted_by_severity(version.verdict.verdicts):
        # a failed step's or variant's why is in the messages under the table, full width
        cells = list(row_cells(version, row, False, why_below=True))
        if row.metric not in ("step", "variant"):
            cells[1] = w.metric_name(row.metric)
        icon = w.icon(row.verdict) or (w.LOOK_ICON if passes_with_a_look(row) else "")
        verdict = f"{icon} {w.verdict_word(row.verdict)}".strip()
        rows.append([*cells, verdict if w.gated(row) else "reported, not gated"])
    return rows


def gate_rows_markdown(version: VersionOutcome) -> str:
    assert version.verdict is not None
    notes = [f"> {inert(note_words(n), max_chars=500)}" for n in version.verdict.notes]
    rows = gate_rows(version)
    table = markdown_table((*ROW_HEADER, "verdict"), [[cell(c) for c in r] for r in rows])
    messages = [
        f"- {inert(w.row_subject(r))}: {with_code(row_message(r), max_chars=400)}"
        for r in sorted_by_severity(version.verdict.verdicts)
        if r.verdict != "pass"
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
                    f"{with_code(event.reason, max_chars=400)}"
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
            reason = numerics.reason
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


def _bisect_offer(version: VersionOutcome, links: LinkContext) -> str | None:
    """The command that bisects a regressed count (report/bisect_offer.py), when it applies."""
    from .bisect_offer import bisect_offer

    if version.verdict is None or version.document is None:
        return None
    config_ref = version.document.config
    config = (config_ref.path if config_ref is not None else None) or "compilegate.yml"
    config = config if _SAFE_ARG.match(config) and ".." not in config else "compilegate.yml"
    return bisect_offer(version.verdict, links, config)


def reproduce_commands(version: VersionOutcome, run_set: RunSetVerdict) -> list[str]:
    """Shell lines that measure this version again from a clean checkout of the measured
    commit and judge it against the same baseline. Only arguments that are plain paths or
    versions are written; anything else becomes the documented default."""
    document = version.document
    env = document.environment if document is not None else Environment()
    config_ref = document.config if document is not None else None
    config = (config_ref.path if config_ref is not None else None) or "compilegate.yml"
    config = config if _SAFE_ARG.match(config) and ".." not in config else "compilegate.yml"
    commit = env.commit or ""
    torch = (env.torch or "").split("+")[0]
    lines = []
    if re.fullmatch(r"[0-9a-f]{7,64}", commit):
        lines.append(f"git checkout {commit}")
    run = ["compilegate", "run", "--config", config, "--out", "result.json"]
    if torch and _SAFE_ARG.match(torch):
        lines.append(
            f'python -m venv torch-{torch} && torch-{torch}/bin/pip install "torch=={torch}"'
        )
        run += ["--python", f"torch-{torch}/bin/python"]
    lines.append(shlex.join(run))
    baseline = run_set.baseline_source
    if baseline:
        shown = baseline if _SAFE_ARG.match(baseline) else "baseline.json"
        lines.append(
            shlex.join(["compilegate", "compare", "--baseline", shown, "--result", "result.json"])
        )
    return lines


def reproduce(version: VersionOutcome, run_set: RunSetVerdict) -> str:
    lines = reproduce_commands(version, run_set)
    note = ""
    if run_set.baseline_source:
        note = (
            f"\n\n{inert(run_set.baseline_source)} is the baseline the gate was given. In "
            "GitHub Actions it is the default branch's baseline artifact: "
            "`compilegate baseline fetch --artifact NAME --out baseline.json` downloads it."
        )
    return "```sh\n" + "\n".join(lines) + "\n```" + note
