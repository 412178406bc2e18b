"""What `compilegate run` prints on stdout: the verdict first and last, each table once.

    verdict      alone: one line per step with its decision (compile with X, stay eager,
                 undecided) and when it pays off; with a baseline or --against: the gate's
                 headline (headline.py), the same sentence the PR comment starts with
    context      the machine and torch; the commits compared; the run-health line
    variants     one table per step: speedup with its 95 % interval, eager and compiled ms of
                 the same statistic the speedup is made of (the mean, or the median for a
                 result without processes), compile seconds, break-even, counts
    attention    with a comparison: every failing or unclear gate row, as row_cells.py says
                 it (values with the digits their change needs, never `18 ms → 18 ms −10 %`)
    advice       what to do, and the command that shows every gate row
    where        one line: where the result went
    verdict      again, last

Laid out by tables.py, which never breaks a number (`11,000`, `−10 %`): a table too
wide for the terminal has its rows stacked instead. Progress goes to stderr (one line per
child process: run/step_measurement.py; the phases with --verbose: run/launcher.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..gate.judges.numerics import NumericsFacts
from ..gate.run_set import RunSetVerdict
from ..results.model import GraphBreaks, Recompiles, ResultDocument, Step, Variant
from ..results.payoff import cold_compile_samples, process_means
from ..results.processes import geometric_mean
from . import wording as w
from .child_failure_words import error_words, short_cause
from .compile_time_words import compile_time_legend
from .cuda_graph_words import ran_without_graphs, step_graph_notes
from .decision_words import decided_variant, short_decision
from .degraded_notes import PlacedNote, recorded_places
from .degraded_words import placed_reasons
from .distributed_words import distributed_sentence
from .escape import shortened
from .first_screen import PROCESSES_NOTE, YARDSTICK_NOTE, FirstScreen, Reason, reason_line
from .headline import headline_of
from .health_words import health_line
from .lever_words import lever_sentence
from .note_words import note_words, paired_summary
from .row_cells import ROW_HEADER
from .row_words.numerics_reference import WithoutReference, numerics_cell, of_side, step_fallbacks
from .row_words.speed import compares_fastest_iterations
from .speeds import Speed, variant_speed, variant_statistic
from .step_bound_words import bound_sentence
from .tables import fit_table, printable, wrap_words

WIDEST = 100
NARROWEST = 60
VALUES = ROW_HEADER.index("baseline → now")

# A recorded error's first line at most this long, its location at its end kept whole.
MESSAGE_CHARS = 160


def terminal_width(columns: int | None) -> int:
    """The width the text is laid out for: the terminal's, within 60–100 columns."""
    return max(NARROWEST, min(WIDEST, columns or WIDEST))


def render_run_text(
    document: ResultDocument,
    *,
    width: int = WIDEST,
    run_set: RunSetVerdict | None = None,
    where_lines: Sequence[str] = (),
    every_row_command: str | None = None,
) -> str:
    """The whole stdout of `compilegate run`. `run_set`: the comparison with a baseline (or
    the base, in paired mode); `where_lines`: where the results went; `every_row_command`:
    what shows every gate row."""
    verdict = _verdict_lines(document, run_set, width)
    lines = [*verdict, *_context(document, run_set, width)]
    reasons = FirstScreen.of(run_set).reasons if run_set is not None else ()
    said = " ".join(reason_texts(reasons))
    for step in document.steps:
        lines += ["", *_step_lines(step, width, said, fallbacks_said(reasons))]
    legend = _legend(document)
    if run_set is not None:
        lines += _attention(run_set, width, every_row_command)
    lines.append("")
    for sentence in legend:
        lines += wrap_words(sentence, width)
    lines += where_lines  # one line each, however long: a path is copied whole
    lines += ["", *verdict]
    return printable("\n".join(lines) + "\n")


# -- the verdict ------------------------------------------------------------------------------


def _verdict_lines(
    document: ResultDocument, run_set: RunSetVerdict | None, width: int
) -> list[str]:
    if run_set is not None:
        icon, headline = headline_of(run_set)
        return wrap_words(f"{icon} compilegate {headline}".strip(), width, hanging="  ")
    lines: list[str] = []
    for step in document.steps:
        lines += wrap_words(f"→ {step_decision(step)}", width, hanging="  ")
    return lines or ["→ no step measured"]


def step_decision(step: Step) -> str:
    """One line per step: `gpt: compile with reduce-overhead 3.50× (3.28–3.73) by mean step
    time: pays off after 1,500 steps (…)`, `stay eager: …`, `undecided: …`
    (report/decision_words.py), or why it failed; variants that failed are named first
    (`gpt: 2 of 4 variants failed (…); compile with …`)."""
    if step.failed:
        return f"{step.name}: failed: {_first_line(error_words(step.error, step.failure))}"
    failed = failed_variants_text(step)
    first = f"{failed}; " if failed else ""
    decision = short_decision(step)
    variant = decided_variant(step)
    # on a GPU, the decided variant that ran without its CUDA graphs (on a CPU, where they
    # never run, the variants table says so once)
    without = (
        ran_without_graphs(variant, step.device) if variant and step.device == "cuda" else None
    )
    return f"{step.name}: {first}{decision}" + (f"; {without}" if without else "")


def failed_variants_text(step: Step) -> str:
    """`2 of 4 variants failed (default+dynamic, default+step: timed out while numerics)`, or
    "" when none failed: said first, so no decision about the others hides them."""
    failed = [v for v in step.variants if v.failed]
    if not failed:
        return ""
    by_cause: dict[str, list[str]] = {}
    for variant in failed:
        by_cause.setdefault(_failure_cause(variant), []).append(variant.id)
    causes = "; ".join(f"{', '.join(ids)}: {cause}" for cause, ids in by_cause.items())
    return f"{len(failed)} of {len(step.variants)} variants failed ({causes})"


def _failure_cause(variant: Variant) -> str:
    """A failed variant's cause, short: its recorded cause and phase (`timed out while
    numerics`); for a document written before they were recorded, its error's first line as
    recorded (the table below says each error whole)."""
    short = short_cause(variant.failure) if variant.failure else None
    cause = short or _first_line(error_words(variant.error, variant.failure))
    return cause if len(cause) <= 80 else cause[:79] + "…"


def _first_line(text: object) -> str:
    lines = str(text or "").strip().splitlines()
    line = lines[0] if lines else "no reason recorded"
    return shortened(line, MESSAGE_CHARS)


# -- context ----------------------------------------------------------------------------------


def _context(document: ResultDocument, run_set: RunSetVerdict | None, width: int) -> list[str]:
    env = document.environment
    where = env.gpu_name or f"CPU, {env.cpu_count or '?'} cores"
    cache = env.inductor_cache
    parts = [
        f"compilegate {document.tool.version}",
        f"torch {env.torch}",
        str(where),
        f"Python {env.python}",
    ]
    if cache:
        parts.append(f"inductor cache {cache}")
    lines = wrap_words(" · ".join(parts), width, hanging="  ")
    if run_set is not None and run_set.baseline is not None:
        base_env = run_set.baseline.environment
        paired = next((v.verdict.paired for v in run_set.versions if v.verdict), None)
        against = f"base {_short(base_env.commit)}" if paired else "baseline"
        if not paired:
            against += f" {_short(base_env.commit)} (torch {base_env.torch})"
        head = f"head {_short(env.commit)} against {against}"
        lines += wrap_words(
            head + (f" · {paired_summary(paired)}" if paired else ""), width, hanging="  "
        )
    health = health_line(document)
    if health:
        lines += wrap_words(health, width, hanging="  ")
    return lines


def _short(sha: object) -> str:
    return str(sha)[:7] if sha else "(not recorded)"


# -- the variants of a step -------------------------------------------------------------------


def variant_ms(step: Step, variant: Variant) -> tuple[float, float] | None:
    """(eager ms, compiled ms) by the statistic of the variant's speedup: for the mean, the
    geometric mean over processes of each one's mean, so eager ÷ compiled is the speedup."""
    if variant_statistic(step, variant).name == "mean":
        means = process_means(variant)
        return geometric_mean([e for e, _ in means]), geometric_mean([c for _, c in means])
    eager, compiled = variant.eager_step_ms, variant.step_ms
    if eager is not None and compiled is not None:
        return float(eager.median), float(compiled.median)
    return None


def reason_texts(reasons: Sequence[Reason]) -> list[str]:
    """Why each failing code metric failed, one line each, said once for the variants and
    versions it failed alike on: the reasons the PR comment gives (first_screen/)."""
    return [reason_line(reason) for reason in reasons]


def fallbacks_said(reasons: Sequence[Reason]) -> frozenset[WithoutReference]:
    """The numerics checks without their float64 reference that the reasons say (a
    numerics reason says its run's, row_words/numerics.py)."""
    found = set()
    for reason in reasons:
        fallback = of_side(reason.facts.run) if isinstance(reason.facts, NumericsFacts) else None
        if fallback is not None:
            found.add(fallback)
    return frozenset(found)


def _said_already(note: PlacedNote, said: str) -> bool:
    """Whether every file:line a degraded note names is in a reason the report gives below
    (an older document's note: the places its text names)."""
    sites = note.places if note.places is not None else recorded_places(note.text)
    return bool(sites) and all(site in said for site in sites)


def _step_lines(
    step: Step,
    width: int,
    said: str = "",
    fallbacks: frozenset[WithoutReference] = frozenset(),
) -> list[str]:
    """The step's variants table and its notes; a degraded note whose file:lines the gate's
    reasons (`said`) give already is left to them, and so is a numerics check without its
    float64 reference that they say (`fallbacks`)."""
    device = step.device
    title = f"step {step.name}" + (f" ({device})" if device else "")
    if step.failed:
        error = error_words(step.error, step.failure)
        return wrap_words(f"{title}: failed: {error}", width, hanging="    ")
    noise = step.eager.noise_pct if step.eager is not None else None
    if noise is not None:
        title += f" · eager A/A noise ±{noise:.1f} %"
    rows: list[list[str]] = []
    notes: list[str] = []
    degraded: dict[str, list[str]] = {}  # a reason said once for the variants it degraded
    for variant in step.variants:
        if variant.failed:
            rows.append([variant.id, "failed", *["-"] * 7])
            notes += [f"{variant.id}: failed: {error_words(variant.error, variant.failure)}"]
            continue
        rows.append(_variant_row(step, variant))
        for reason in placed_reasons(variant):
            if not _said_already(reason, said):
                degraded.setdefault(reason.text, []).append(variant.id)
    header = [
        "variant",
        "speedup, 95 % CI",
        "eager ms",
        "compiled ms",
        "compile s",
        "break-even steps",
        "graph breaks",
        "recompiles",
        "numerics",
    ]
    notes += [
        f"{', '.join(ids)}: not wholly compiled: {reason}" for reason, ids in degraded.items()
    ]
    # a check without its float64 reference, unless the gate's reasons below say it already
    notes += [
        f"{ids}: numerics {fallback.words()}"
        for ids, fallback in step_fallbacks(step)
        if fallback not in fallbacks
    ]
    notes += step_graph_notes(step)
    bound = bound_sentence(step)
    if bound:
        notes.append(f"what bounds it: {bound}")
    levers = lever_sentence(step)
    if levers:
        notes.append(f"compile from: {levers}")
    distributed = distributed_sentence(step)
    if distributed:
        notes.append(f"distributed: {distributed}")
    header, rows, same = _drop_said_once(header, rows)
    lines = [title, *fit_table([header, *rows], width, indent="  ")]
    if same:
        lines += wrap_words("every variant: " + "; ".join(same), width, indent="  ", hanging="    ")
    for note in notes:
        lines += wrap_words(note, width, indent="  ", hanging="    ")
    return lines


def _variant_row(step: Step, variant: Variant) -> list[str]:
    speed = variant_speed(step, variant)
    ms = variant_ms(step, variant)
    eager, compiled = ("-", "-") if ms is None else (_ms(ms[0]), _ms(ms[1]))
    compile_s = variant.compile_s  # the compile time: the first process's cold compile
    return [
        variant.id,
        "-" if speed is None else speed.text(),
        eager,
        compiled,
        f"{compile_s:.1f}" if compile_s is not None else "-",
        _break_even(variant, speed),
        _count(variant.graph_breaks),
        _count(variant.recompiles),
        numerics_cell(variant.numerics),
    ]


def _drop_said_once(
    header: list[str], rows: list[list[str]]
) -> tuple[list[str], list[list[str]], list[str]]:
    """Columns (after the speed and times) with one value on every row of several: said once."""
    if len(rows) < 2:
        return header, rows, []
    keep, same = [], []
    for i, name in enumerate(header):
        values = {row[i] for row in rows}
        if i >= 5 and len(values) == 1:
            same.append(f"{name} {values.pop()}")
        else:
            keep.append(i)
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows], same


def _ms(value: float) -> str:
    """Four significant digits: enough that eager ÷ compiled gives back the speedup shown."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value <= 0:
        return f"{value:.3f}"
    return f"{value:.{max(0, 3 - math.floor(math.log10(value)))}f}"


def _break_even(variant: Variant, speed: Speed | None) -> str:
    """The break-even the decision uses, two significant digits, with its 95 % interval."""
    interval = variant.payoff.break_even_steps if variant.payoff is not None else None
    if interval is not None and interval.estimate is not None:
        shown = w.steps_count(interval.estimate)
        low, high = interval.low, interval.high
        if low is not None and high is not None:
            shown += f" ({w.steps_count(low)}–"
            shown += f"{w.steps_count(high)})"
        elif low is not None:
            shown += f" ({w.steps_count(low)}–never)"
        return shown
    if speed is not None and speed.high is not None and speed.high < 1:
        return "never: slower"
    value = variant.break_even_steps
    return w.steps_count(value) if value is not None else "-"


def _count(section: GraphBreaks | Recompiles | None) -> str:
    return "-" if section is None else str(section.count)


def _legend(document: ResultDocument) -> list[str]:
    """What the numbers are, once: the statistic of each step's ms and speedup, then what
    the compile seconds and the break-even are."""
    statistics: set[tuple[str, int]] = set()
    for step in document.steps:
        for variant in step.variants:
            if not variant.failed and variant_speed(step, variant) is not None:
                stat = variant_statistic(step, variant)
                statistics.add((stat.name, stat.processes))
    out = []
    several = sorted(n for name, n in statistics if name == "mean" and n > 1)
    if several:
        counts = " or ".join(str(n) for n in several)
        out.append(
            f"eager ms, compiled ms: mean step time (outliers included) of each process, "
            f"geometric mean over {counts} processes; speedup: eager ÷ compiled of "
            "those, 95 % CI over the processes."
        )
    if ("mean", 1) in statistics:
        out.append(
            "eager ms, compiled ms: mean step time (outliers included) in one process; "
            "speedup: their ratio, 95 % CI over its interleaved rounds."
        )
    if any(name != "mean" for name, _ in statistics):
        out.append(
            "eager ms, compiled ms: median step time in one process; speedup: their "
            "ratio, 95 % CI over the interleaved rounds."
        )
    compile_words = compile_time_legend(_cold_compiles(document))
    return [*out, compile_words] if compile_words else out


def _cold_compiles(document: ResultDocument) -> list[int]:
    """How many cold compiles each measured variant's break-even pooled (results/payoff.py)."""
    return [
        len(cold_compile_samples(variant))
        for step in document.steps
        for variant in step.variants
        if not variant.failed and variant.compile_s is not None
    ]


# -- the comparison ---------------------------------------------------------------------------


def _attention(run_set: RunSetVerdict, width: int, every_row_command: str | None) -> list[str]:
    """The comparison as the PR comment's first screen says it (first_screen/: the same
    attention rows, reasons and advice, laid out for the terminal), then the notes that
    explain its numbers and the command that shows every gate row."""
    screen = FirstScreen.of(run_set)
    lines = screen.attention_lines(width)
    for reason in screen.reasons:
        lines += wrap_words(reason_line(reason), width, indent="  ", hanging="    ")
    rows = [
        (version, row)
        for version in run_set.versions
        if version.verdict is not None
        for row in version.verdict.verdicts
        if row.verdict in w.FAILING or row.verdict == "inconclusive"
    ]
    if any(compares_fastest_iterations(row) for _, row in rows):
        lines += ["", *wrap_words(PROCESSES_NOTE, width)]
    if any(row.unit == "yardsticks" for _, row in rows):
        lines += ["", *wrap_words(YARDSTICK_NOTE, width)]
    for version in run_set.versions:
        for note in version.verdict.notes if version.verdict else ():
            lines += ["", *wrap_words(note_words(note).replace("`", ""), width)]
    for sentence, command in screen.advice:
        lines += ["", *wrap_words(sentence, width)]
        if command:
            lines.append(f"  {command}")
    if every_row_command:
        lines += ["", "Every gate row, with its reason:", f"  {every_row_command}"]
    return lines
