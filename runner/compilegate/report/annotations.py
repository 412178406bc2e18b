"""Workflow annotations for a run set: what to pin to which line of the pull request.

New graph breaks in the repository are errors at their line; recompiles whose guard failed
at a line of the repository are warnings (more recompiles than the baseline had: the
baseline comparison says which). Without a baseline every in-repository graph break is a
warning. The same site seen under several PyTorch versions is one annotation naming them.
Errors come first, so GitHub's per-step limit drops the least important.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..gate.judges.diagnostics import diff_graph_break_sites
from ..gate.run_set import RunSetVerdict
from .workflow_annotation import Annotation

Doc = Mapping[str, Any]


def annotations_for(run_set: RunSetVerdict) -> list[Annotation]:
    found: dict[tuple, dict[str, Any]] = {}
    base_steps = {s["name"]: s for s in (run_set.baseline or {}).get("steps", [])}
    for version in run_set.versions:
        for step in (version.document or {}).get("steps", []):
            base_variants = {
                v["id"]: v for v in base_steps.get(step["name"], {}).get("variants", [])
            }
            for variant in step.get("variants", []):
                where = f"{step['name']}/{variant['id']}"
                base = base_variants.get(variant["id"]) if run_set.baseline is not None else None
                for level, kind, item in _findings(variant, base, run_set.baseline is not None):
                    key = (level, kind, item.get("file"), item.get("line"), item.get("reason"))
                    entry = found.setdefault(key, {"item": item, "where": [], "versions": []})
                    if where not in entry["where"]:
                        entry["where"].append(where)
                    if version.label not in entry["versions"]:
                        entry["versions"].append(version.label)
    out = [_annotation(key, entry) for key, entry in found.items()]
    return sorted(out, key=lambda a: ("error", "warning", "notice").index(a.level))


def _findings(variant: Doc, base: Doc | None, compared: bool) -> list[tuple[str, str, Doc]]:
    if variant.get("status") != "ok":
        return []
    sites = [s for s in (variant.get("graph_breaks") or {}).get("sites", []) if _in_repo(s)]
    if compared:
        base_sites = ((base or {}).get("graph_breaks") or {}).get("sites", [])
        new, _ = diff_graph_break_sites(base_sites, sites)
        out = [("error", "graph break", s) for s in new]
    else:
        out = [("warning", "graph break", s) for s in sites]
    events = (variant.get("recompiles") or {}).get("events", [])
    base_count = ((base or {}).get("recompiles") or {}).get("count", 0) if compared else 0
    if len(events) > base_count:
        out += [("warning", "recompile", e) for e in events if _in_repo(e)]
    return out


def _annotation(key: tuple, entry: dict[str, Any]) -> Annotation:
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


def _in_repo(item: Doc) -> bool:
    """A repository-relative path: the only places a pull request can be annotated."""
    file = item.get("file")
    if not isinstance(file, str) or not file or file.startswith(("/", "<")):
        return False
    if item.get("in_repo") is False or item.get("origin") in ("library", "torch", "harness"):
        return False
    return ".." not in file.split("/")
