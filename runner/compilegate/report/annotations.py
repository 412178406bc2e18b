"""Workflow annotations for a run set: what to pin to which line of the pull request.

New graph breaks in the repository are errors at their line; recompiles whose guard failed
at a line of the repository are warnings (more recompiles than the baseline had: the
baseline comparison says which). Without a baseline every in-repository graph break is a
warning. The same site seen under several PyTorch versions is one annotation naming them.
Errors come first, so GitHub's per-step limit drops the least important.
"""

from __future__ import annotations

from typing import Any

from ..gate.judges.diagnostics import diff_graph_break_sites
from ..gate.run_set import RunSetVerdict
from ..results.model import BreakSite, RecompileEvent, Variant
from .absence_words import recompile_reason_words
from .workflow_annotation import Annotation

Finding = BreakSite | RecompileEvent


def annotations_for(run_set: RunSetVerdict) -> list[Annotation]:
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    baseline = run_set.baseline
    for version in run_set.versions:
        for step in version.document.steps if version.document is not None else ():
            base_step = baseline.step(step.name) if baseline is not None else None
            for variant in step.variants:
                where = f"{step.name}/{variant.id}"
                base = base_step.variant(variant.id) if base_step is not None else None
                for level, kind, item in _findings(variant, base, baseline is not None):
                    said = recompile_reason_words(item.reason)  # a code where torch gave none
                    key = (level, kind, item.file, item.line, said)
                    entry = found.setdefault(key, {"item": item, "where": [], "versions": []})
                    if where not in entry["where"]:
                        entry["where"].append(where)
                    if version.label not in entry["versions"]:
                        entry["versions"].append(version.label)
    out = [_annotation(key, entry) for key, entry in found.items()]
    return sorted(out, key=lambda a: ("error", "warning", "notice").index(a.level))


def _findings(
    variant: Variant, base: Variant | None, compared: bool
) -> list[tuple[str, str, Finding]]:
    if variant.failed:
        return []
    breaks = variant.graph_breaks
    sites = [s for s in (breaks.sites if breaks is not None else ()) if _in_repo(s)]
    out: list[tuple[str, str, Finding]]
    if compared:
        base_breaks = base.graph_breaks if base is not None else None
        new, _ = diff_graph_break_sites(base_breaks.sites if base_breaks else (), sites)
        out = [("error", "graph break", s) for s in new]
    else:
        out = [("warning", "graph break", s) for s in sites]
    events = variant.recompiles.events if variant.recompiles is not None else ()
    base_recompiles = base.recompiles if base is not None else None
    base_count = base_recompiles.count if compared and base_recompiles is not None else 0
    if len(events) > base_count:
        out += [("warning", "recompile", e) for e in events if _in_repo(e)]
    return out


def _annotation(key: tuple[Any, ...], entry: dict[str, Any]) -> Annotation:
    level, kind, file, line, reason = key
    label = f"new {kind}" if level == "error" else kind
    versions = ", ".join(entry["versions"])
    where = ", ".join(entry["where"][:3]) + (" …" if len(entry["where"]) > 3 else "")
    return Annotation(
        level=level,
        message=f"{label} in {where} ({versions}): {reason}",
        file=file,
        line=line if isinstance(line, int) and line >= 1 else None,
        title=f"compilegate: {label}",
    )


def _in_repo(item: Finding) -> bool:
    """A repository-relative path: the only places a pull request can be annotated."""
    file = item.file
    if not file or file.startswith(("/", "<")):
        return False
    in_repo = item.in_repo if isinstance(item, BreakSite) else None
    if in_repo is False or item.origin in ("library", "torch", "harness"):
        return False
    return ".." not in file.split("/")
