"""Each version of a run set said once, as values: the pass that words its variants and its
gate rows, which the comment's details (details.py) and the terminal's report
(run_set_text.py) lay out without wording a row again.

    said_version(version, run_set)     one version's words (VersionSaid): None where it has
                                       no result
    VariantsSaid                       every variant's cells (VARIANT_HEADER), the sentences
                                       under the table (the decision, a numerics check without
                                       its float64 reference, what bounds the step, what each
                                       compile lever cost, how distributed ranks ran) and
                                       what failed to run
    GateRowSaid                        one gate row: its cells (row_cells.ROW_HEADER and the
                                       verdict), its subject and, unless it passed, its
                                       sentence (row_words/)

The words are plain: each layout escapes them for its own medium (report/escape.py in the
comment; the terminal prints them as they are).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import VerdictReport, sorted_by_severity
from ..results.formats import format_bytes
from ..results.model import ResultDocument, Step, Variant
from . import wording as w
from .child_failure_words import error_words
from .decision_words import decision_sentence
from .distributed_words import distributed_sentence
from .lever_words import lever_sentence
from .note_words import note_words
from .row_cells import said_cells
from .row_words import worded_rows
from .row_words.numerics_reference import numerics_cell
from .row_words.numerics_reference import step_notes as numerics_notes
from .row_words.worded import WordedRows
from .speeds import variant_pays_off, variant_speed
from .step_bound_words import bound_sentence

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
# An argument the reproduce commands write as it is; anything else becomes the default.
SAFE_ARG = re.compile(r"^[A-Za-z0-9_./+=-]+$")
DEFAULT_CONFIG = "compilegate.yml"


@dataclass(frozen=True)
class VariantsSaid:
    """A version's variants: one row of cells each (VARIANT_HEADER; a step that failed
    before any variant ran, one row), then (where, sentence) pairs for what is said under
    the table."""

    rows: tuple[tuple[str, ...], ...]
    decisions: tuple[tuple[str, str], ...]
    numerics_fallbacks: tuple[tuple[str, str], ...]
    bounds: tuple[tuple[str, str], ...]
    levers: tuple[tuple[str, str], ...]
    distributed: tuple[tuple[str, str], ...]
    failures: tuple[tuple[str, str], ...]

    @property
    def compiled(self) -> bool:
        """Whether any row has a compile time (the compile column's legend is said)."""
        return any(row[COMPILE_AT] != "-" for row in self.rows)


@dataclass(frozen=True)
class GateRowSaid:
    """One gate row as every screen behind the first shows it: `cells` (ROW_HEADER, the
    verdict last), `subject` (step · variant) and `message`, the row's sentence, for a row
    that did not pass (None for one that did)."""

    subject: str
    cells: tuple[str, ...]
    message: str | None


@dataclass(frozen=True)
class VersionSaid:
    """A version with a result, said once: its variants; its verdict's notes and gate rows
    (most severe first; none without a verdict) and whether it was judged; and the shell
    lines that measure and judge it again, with the config as a command may name it
    (config_argument)."""

    variants: VariantsSaid
    judged: bool
    notes: tuple[str, ...]
    gate_rows: tuple[GateRowSaid, ...]
    config: str
    reproduce: tuple[str, ...]


def said_version(
    version: VersionOutcome, run_set: RunSetVerdict, worded: WordedRows | None = None
) -> VersionSaid | None:
    """The version said once; None where it has no result. `worded`: what report/ says of
    each row (row_words.worded_rows, made once for the whole report; here if not given)."""
    document = version.document
    if document is None:
        return None
    verdict = version.verdict
    return VersionSaid(
        said_variants(document.steps),
        verdict is not None,
        tuple(note_words(note) for note in verdict.notes) if verdict is not None else (),
        gate_rows(verdict, worded or worded_rows([version])) if verdict is not None else (),
        config_argument(document),
        tuple(reproduce_commands(document, run_set.baseline_source)),
    )


# -- the variants ----------------------------------------------------------------------------


def said_variants(steps: Sequence[Step]) -> VariantsSaid:
    """The steps' variants said once: their cells, the sentences under them, what failed."""
    return VariantsSaid(
        tuple(tuple(row) for row in variant_rows(steps)),
        tuple(decisions(steps)),
        tuple(numerics_fallbacks(steps)),
        tuple(_sentences(steps, bound_sentence)),
        tuple(_sentences(steps, lever_sentence)),
        tuple(_sentences(steps, distributed_sentence)),
        tuple(failures(steps)),
    )


def variant_rows(steps: Sequence[Step]) -> list[list[str]]:
    rows = []
    for step in steps:
        if step.failed and not step.variants:
            rows.append([step.name, "failed (below)", *["-"] * 5])
        for variant in step.variants:
            rows.append(_variant_row(step, variant))
    return rows


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


def decisions(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step, the decision in full: decision_words.py) for every step that has one."""
    return _sentences(steps, decision_sentence)


def numerics_fallbacks(steps: Sequence[Step]) -> list[tuple[str, str]]:
    """(step · variants, why its numerics had no float64 reference and what they compared
    instead) for every such check (row_words/numerics_reference.py)."""
    return [
        (f"{step.name} · {ids}", words)
        for step in steps
        if not step.failed
        for ids, words in numerics_notes(step)
    ]


def _sentences(
    steps: Sequence[Step], sentence_of: Callable[[Step], str | None]
) -> list[tuple[str, str]]:
    """(step, its sentence) for every step that did not fail and has one: its decision
    (decision_words), what bounds it (step_bound_words), what each compile lever cost
    (lever_words), how its ranks ran and compiled (distributed_words)."""
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


# -- the gate rows ---------------------------------------------------------------------------


def gate_rows(verdict: VerdictReport, worded: WordedRows) -> tuple[GateRowSaid, ...]:
    """Every gate row of the version, most severe first, each worded once."""
    rows = []
    for row in sorted_by_severity(verdict.verdicts):
        row_said = worded.of(row)
        said = said_cells(row, row_said)
        # a failed step's or variant's why is in the messages under the table, full width
        cells = (said.subject, said.named, *said.cells()[2:])
        verdict_cell = f"{said.icon} {w.verdict_word(row.verdict)}".strip()
        if not w.gated(row):
            verdict_cell = "reported, not gated"
        message = row_said.text() if row.verdict != "pass" else None
        rows.append(GateRowSaid(said.subject, (*cells, verdict_cell), message))
    return tuple(rows)


# -- reproduction ----------------------------------------------------------------------------


def config_argument(document: ResultDocument) -> str:
    """The config the document was measured with, as a command may write it: a plain
    relative path, else DEFAULT_CONFIG."""
    config_ref = document.config
    config = (config_ref.path if config_ref is not None else None) or DEFAULT_CONFIG
    return config if SAFE_ARG.match(config) and ".." not in config else DEFAULT_CONFIG


def reproduce_commands(document: ResultDocument, baseline: str | None) -> list[str]:
    """Shell lines that measure this version again from a clean checkout of the measured
    commit and judge it against the same baseline. Only arguments that are plain paths or
    versions are written; anything else becomes the documented default."""
    env = document.environment
    commit = env.commit or ""
    torch = (env.torch or "").split("+")[0]
    lines = []
    if re.fullmatch(r"[0-9a-f]{7,64}", commit):
        lines.append(f"git checkout {commit}")
    run = ["compilegate", "run", "--config", config_argument(document), "--out", "result.json"]
    if torch and SAFE_ARG.match(torch):
        lines.append(
            f'python -m venv torch-{torch} && torch-{torch}/bin/pip install "torch=={torch}"'
        )
        run += ["--python", f"torch-{torch}/bin/python"]
    lines.append(shlex.join(run))
    if baseline:
        shown = baseline if SAFE_ARG.match(baseline) else "baseline.json"
        lines.append(
            shlex.join(["compilegate", "compare", "--baseline", shown, "--result", "result.json"])
        )
    return lines
