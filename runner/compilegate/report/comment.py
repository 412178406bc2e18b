"""The pull-request comment (and job summary): one markdown document for a whole run set.

    marker          <!-- compilegate: KEY --> (github/sticky_comment.py), optional
    headline        overall verdict; one line per PyTorch version with the deciding reason
    per version     the decision (compile or stay eager, which variant, break-even), a table
                    step × variant, then collapsible details: graph breaks and recompiles
                    (linked to the PR's head commit), numerics' worst tensors, every verdict
                    row, the environment, and the command that reproduces the run locally
    footer          what was left out, if anything

GitHub refuses a comment over 65,536 characters. When the document is longer, sections are
dropped in DROP_ORDER (least useful first) and the footer says what went and where the
full report is (the job summary and the results artifact). Every string that came from
user code or torch goes through report/escape.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..gate.run_set import RunSetVerdict, VersionOutcome
from ..gate.verdict import (
    MetricVerdict,
    format_bytes,
    format_change,
    format_noise,
    format_value,
    sorted_by_severity,
)
from .escape import cell, inert
from .tables import markdown_table

COMMENT_LIMIT_CHARS = 65_536
# Headroom for the footer and for GitHub counting characters differently from Python.
BUDGET_CHARS = COMMENT_LIMIT_CHARS - 2_000
# Which sections go first when the comment is too long; the headline and the per-version
# verdict lines are never dropped.
DROP_ORDER = ("verdicts", "environment", "numerics", "reproduce", "breaks", "table", "decision")
ICONS = {
    "pass": "✅",
    "improvement": "✅",
    "measured": "ℹ️",
    "new": "ℹ️",
    "regression": "❌",
    "error": "💥",
    "inconclusive": "⚠️",
    "incomparable": "⚠️",
    "removed": "⚠️",
    "missing": "⚠️",
    "skipped": "ℹ️",
}
TABLE_HEADER = (
    "step",
    "variant",
    "speedup (95% CI)",
    "Δ speedup vs baseline",
    "compile s",
    "break-even",
    "graph breaks",
    "recompiles",
    "numerics",
    "peak memory",
)
_SAFE_ARG = re.compile(r"^[A-Za-z0-9_./+=-]+$")
WORST_TENSORS_SHOWN = 3
SITES_SHOWN = 20


@dataclass(frozen=True)
class LinkContext:
    """Where the measured code lives, for links to graph-break lines (all optional)."""

    server_url: str | None = None
    repository: str | None = None
    head_sha: str | None = None

    def blob_url(self, path: str, line: int | None) -> str | None:
        if not (self.server_url and self.repository and self.head_sha) or not path:
            return None
        if path.startswith(("/", "\\")) or ".." in path.split("/"):
            return None  # not a repository-relative path
        anchor = f"#L{int(line)}" if isinstance(line, int) else ""
        return (
            f"{self.server_url.rstrip('/')}/{quote(self.repository, safe='/')}/blob/"
            f"{quote(self.head_sha, safe='')}/{quote(path, safe='/')}{anchor}"
        )


@dataclass(frozen=True)
class Section:
    kind: str
    text: str


def render_comment(
    run_set: RunSetVerdict,
    *,
    marker: str | None = None,
    links: LinkContext | None = None,
    full_report_hint: str = "the job summary and the results artifact",
    limit_chars: int = BUDGET_CHARS,
) -> str:
    """The whole comment: headline, per-version sections, capped at `limit_chars`; `marker`
    (github.sticky_comment.comment_marker) first when given."""
    links = links or LinkContext()
    head = [*([marker] if marker else []), *headline(run_set)]
    sections: list[Section] = []
    for version in run_set.versions:
        sections.extend(version_sections(version, run_set, links))
    kept, dropped = _fit(head, sections, limit_chars)
    parts = ["\n".join(head)] + [s.text for s in kept]
    if dropped:
        counts = {kind: sum(1 for s in dropped if s.kind == kind) for kind in DROP_ORDER}
        listed = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        parts.append(
            f"---\n_Shortened to stay under GitHub's {COMMENT_LIMIT_CHARS:,}-character limit: "
            f"left out {listed} section(s). The full report is in {inert(full_report_hint)}._"
        )
    return "\n\n".join(parts) + "\n"


def headline(run_set: RunSetVerdict) -> list[str]:
    overall = run_set.overall
    lines = [
        f"## {ICONS.get(overall, '')} compilegate: {overall} (exit {run_set.exit_code})",
        "",
    ]
    for version in run_set.versions:
        lines.append(
            f"- **{inert(version.label)}** {ICONS.get(version.overall, '')} "
            f"{version.overall}: {deciding_reason(version)}"
        )
    if run_set.baseline_source is None:
        lines += ["", "_No baseline given: measured only, nothing compared._"]
    return lines


def deciding_reason(version: VersionOutcome) -> str:
    """The one row that decided this version's verdict, in a line."""
    if version.error is not None:
        return inert(version.error, max_chars=300)
    if version.verdict is None:
        failed = _failures(version.document or {})
        if failed:
            return inert(failed[0], max_chars=300)
        steps = (version.document or {}).get("steps", [])
        return inert("; ".join(_decision_line(s) for s in steps) or "no steps", max_chars=300)
    rows = sorted_by_severity(version.verdict.verdicts)
    if not rows:
        return "nothing compared"
    top = rows[0]
    if top.verdict == "pass":
        return f"all {len(rows)} checks pass"
    return row_reason(top)


def row_reason(row: MetricVerdict) -> str:
    """`transformer/default: speedup 1.21x → 0.95x (−21.5 %, noise ±3.0 %)`."""
    where = f"{row.step}/{row.variant}" if row.variant else row.step
    if row.baseline is not None and row.current is not None and row.change is not None:
        moved = (
            f"{row.metric} {format_value(row.baseline, row.unit)} → "
            f"{format_value(row.current, row.unit)} ({format_change(row.change, row.change_unit)}"
            + (f", noise {format_noise(row.noise_pct)}" if row.noise_pct is not None else "")
            + ")"
        )
        return inert(f"{where}: {moved}", max_chars=300)
    return inert(f"{where}: {row.message}", max_chars=300)


def version_sections(
    version: VersionOutcome, run_set: RunSetVerdict, links: LinkContext
) -> list[Section]:
    title = f"### {ICONS.get(version.overall, '')} {inert(version.label)}: {version.overall}"
    if version.document is None:
        return [Section("decision", f"{title}\n\n{inert(version.error or 'no result')}")]
    document = version.document
    steps = document.get("steps", [])
    decisions = "\n".join(f"- {inert(_decision_line(step))}" for step in steps)
    out = [Section("decision", f"{title}\n\n**Decision**\n\n{decisions or '- no steps'}")]
    out.append(Section("table", "\n".join(_table(steps, version))))
    breaks = _breaks_and_recompiles(steps, links)
    if breaks:
        out.append(_details("breaks", f"Graph breaks and recompiles ({breaks[0]})", breaks[1]))
    numerics = _numerics(steps)
    if numerics:
        out.append(_details("numerics", "Numerics: worst tensors", numerics))
    if version.verdict is not None:
        out.append(_details("verdicts", "Every verdict row", _verdict_rows(version)))
    out.append(_details("environment", "Environment", _environment(document)))
    out.append(_details("reproduce", "Reproduce locally", _reproduce(document, run_set)))
    return out


def _details(kind: str, summary: str, body: str) -> Section:
    # Blank lines around the body let GitHub render markdown inside the HTML block.
    return Section(kind, f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>")


def _decision_line(step: Mapping[str, Any]) -> str:
    if step.get("status") != "ok":
        return f"{step.get('name')}: failed: {step.get('error')}"
    recommendation = (step.get("recommendation") or {}).get("text") or "no recommendation"
    return f"{step.get('name')}: {recommendation}"


def _table(steps: Sequence[Mapping[str, Any]], version: VersionOutcome) -> list[str]:
    changes = _speedup_changes(version)
    rows = []
    for step in steps:
        for variant in step.get("variants", []):
            rows.append(_table_row(step, variant, changes))
        if step.get("status") != "ok" and not step.get("variants"):
            rows.append([cell(step.get("name")), "-", "error", *["-"] * 7])
    return markdown_table(TABLE_HEADER, rows) if rows else ["_No variants measured._"]


def _table_row(
    step: Mapping[str, Any], variant: Mapping[str, Any], changes: Mapping[tuple, str]
) -> list[str]:
    name, vid = cell(step.get("name")), cell(variant.get("id"))
    if variant.get("status") != "ok":
        return [name, vid, f"💥 {cell(variant.get('error') or 'error')}", *["-"] * 7]
    sp = variant.get("speedup") or {}
    speedup = (
        f"{sp['median']:.2f}x ({sp['ci_low']:.2f}–{sp['ci_high']:.2f})"
        if all(isinstance(sp.get(k), (int, float)) for k in ("median", "ci_low", "ci_high"))
        else "-"
    )
    breaks = variant.get("graph_breaks") or {}
    recompiles = variant.get("recompiles") or {}
    numerics = (variant.get("numerics") or {}).get("status", "-")
    peak = variant.get("peak_bytes")
    return [
        name,
        vid,
        speedup,
        changes.get((step.get("name"), variant.get("id")), "-"),
        _number(variant.get("compile_s"), "{:.1f}"),
        "never"
        if variant.get("break_even_steps") is None
        else f"{variant['break_even_steps']:,.0f}",
        str(breaks.get("count", "-")),
        str(recompiles.get("count", "-")),
        cell(numerics),
        "n/a" if peak is None else format_bytes(peak),
    ]


def _speedup_changes(version: VersionOutcome) -> dict[tuple, str]:
    if version.verdict is None:
        return {}
    out = {}
    for row in version.verdict.verdicts:
        if row.metric == "speedup" and row.change is not None:
            icon = ICONS.get(row.verdict, "") if row.verdict != "pass" else ""
            out[(row.step, row.variant)] = f"{format_change(row.change, row.change_unit)} {icon}"
    return out


def _breaks_and_recompiles(
    steps: Sequence[Mapping[str, Any]], links: LinkContext
) -> tuple[int, str] | None:
    lines = []
    total = 0
    for step in steps:
        for variant in step.get("variants", []):
            where = inert(f"{step.get('name')}/{variant.get('id')}")
            for site in ((variant.get("graph_breaks") or {}).get("sites") or [])[:SITES_SHOWN]:
                total += 1
                lines.append(f"- {where}: {_site_line(site, links)}")
            events = (variant.get("recompiles") or {}).get("events") or []
            for event in events[:SITES_SHOWN]:
                total += 1
                lines.append(
                    f"- {where}: recompile of {inert(event.get('function', '?'))} at "
                    f"{_site_link(event, links)}: guard "
                    f"{inert(event.get('reason', ''), max_chars=400)}"
                )
            if (variant.get("recompiles") or {}).get("limit_hit"):
                lines.append(f"- {where}: ⚠️ recompile limit hit: that frame now runs eagerly")
    return (total, "\n".join(lines)) if lines else None


def _site_line(site: Mapping[str, Any], links: LinkContext) -> str:
    """`graph break at model.py:24 (caused at layers.py:61): reason`; torch's own are marked."""
    origin = site.get("origin") or ("repo" if site.get("in_repo") else "library")
    kind = "graph break inside torch (not gated)" if origin == "torch" else "graph break"
    text = f"{kind} at {_site_link(site, links)}"
    cause = site.get("cause") or {}
    if cause and (cause.get("file"), cause.get("line")) != (site.get("file"), site.get("line")):
        cause_site = {**cause, "origin": origin if cause.get("file") == site.get("file") else None}
        text += f" (caused at {_site_link(cause_site, links)})"
    reason = cause.get("reason") or site.get("reason", "")
    return f"{text}: {inert(reason, max_chars=400)}"


def _site_link(site: Mapping[str, Any], links: LinkContext) -> str:
    """`file:line`, linked to the head commit when the file is the repository's."""
    path, line = str(site.get("file") or "?"), site.get("line")
    text = inert(f"{path}:{line}" if line is not None else path)
    in_repo = site.get("origin") == "repo" or (
        site.get("origin") is None and site.get("in_repo", False)
    )
    url = links.blob_url(path, line) if in_repo else None
    return f"[{text}]({url})" if url else text


def _numerics(steps: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for step in steps:
        for variant in step.get("variants", []):
            numerics = variant.get("numerics") or {}
            if numerics.get("status") not in ("fail", "error"):
                continue
            where = inert(f"{step.get('name')}/{variant.get('id')}")
            reason = numerics.get("reason")
            lines.append(
                f"- {where}: {inert(numerics['status'])}"
                + (f": {inert(reason, max_chars=300)}" if reason else "")
            )
            for worst in (numerics.get("worst") or [])[:WORST_TENSORS_SHOWN]:
                lines.append(
                    f"  - {inert(worst.get('kind', ''))} {inert(worst.get('tensor', ''))}: "
                    f"rmse compiled {_number(worst.get('rmse_compiled'), '{:.3g}')} vs eager "
                    f"{_number(worst.get('rmse_eager'), '{:.3g}')}, cosine "
                    f"{_number(worst.get('cosine'), '{:.4f}')}"
                )
    return "\n".join(lines)


def _verdict_rows(version: VersionOutcome) -> str:
    assert version.verdict is not None
    header = ("step", "variant", "metric", "baseline", "current", "change", "noise", "verdict")
    rows = [
        [
            cell(r.step),
            cell(r.variant or "-"),
            cell(r.metric),
            cell(format_value(r.baseline, r.unit)),
            cell(format_value(r.current, r.unit)),
            format_change(r.change, r.change_unit),
            format_noise(r.noise_pct),
            f"{ICONS.get(r.verdict, '')} {r.verdict}",
        ]
        for r in sorted_by_severity(version.verdict.verdicts)
    ]
    notes = [f"> {inert(note, max_chars=500)}" for note in version.verdict.notes]
    return "\n".join([*notes, *([""] if notes else []), *markdown_table(header, rows)])


def _environment(document: Mapping[str, Any]) -> str:
    env = document.get("environment") or {}
    fields = (
        ("GPU", env.get("gpu_name") or "none"),
        ("driver", env.get("driver") or "-"),
        ("CUDA", env.get("cuda") or "-"),
        ("torch", env.get("torch")),
        ("Python", env.get("python")),
        ("CPU", env.get("cpu_model") or env.get("processor")),
        ("device", env.get("device")),
        ("commit", env.get("commit")),
        ("Inductor cache", env.get("inductor_cache")),
        ("measured at", document.get("created_at")),
    )
    return "\n".join(
        f"- {name}: {inert(value if value is not None else '-')}" for name, value in fields
    )


def _reproduce(document: Mapping[str, Any], run_set: RunSetVerdict) -> str:
    config = (document.get("config") or {}).get("path") or "compilegate.yml"
    config = config if _SAFE_ARG.match(config) else "compilegate.yml"
    torch = ((document.get("environment") or {}).get("torch") or "").split("+")[0]
    command = ["compilegate", "run", "--config", config]
    baseline = run_set.baseline_source
    if baseline and _SAFE_ARG.match(baseline):
        command += ["--baseline", baseline]
    lines = ["```sh"]
    if torch and _SAFE_ARG.match(torch):
        lines.append(
            f'python -m venv torch-{torch} && torch-{torch}/bin/pip install "torch=={torch}"'
        )
        command += ["--python", f"torch-{torch}/bin/python"]
    lines += [" ".join(command), "```"]
    return "\n".join(lines)


def _failures(document: Mapping[str, Any]) -> list[str]:
    out = []
    for step in document.get("steps", []):
        if step.get("status") != "ok":
            out.append(f"{step.get('name')}: {step.get('error')}")
        for variant in step.get("variants", []):
            if variant.get("status") != "ok":
                out.append(f"{step.get('name')}/{variant.get('id')}: {variant.get('error')}")
    return out


def _number(value: Any, fmt: str) -> str:
    return fmt.format(value) if isinstance(value, (int, float)) else "-"


def _fit(
    head: list[str], sections: list[Section], limit_chars: int
) -> tuple[list[Section], list[Section]]:
    """Drop sections, least useful kind first and the last version's first, until it fits."""
    kept = list(sections)
    dropped: list[Section] = []

    def size() -> int:
        return len("\n".join(head)) + sum(len(s.text) + 2 for s in kept) + 600

    for kind in DROP_ORDER:
        for section in reversed([s for s in kept if s.kind == kind]):
            if size() <= limit_chars:
                return kept, dropped
            kept.remove(section)
            dropped.append(section)
    return kept, dropped
