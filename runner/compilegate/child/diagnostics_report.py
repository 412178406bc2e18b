"""Combine what CompileProbe captured into the variant's diagnostics (pure functions).

Input is the probe's snapshot (plain dicts: log records, graph_break_reasons, counters,
compilation metrics); output is the `recompiles`, `graph_breaks`, `fallbacks_to_eager` and
`fallbacks` parts of a variant in schemas/result.schema.json: facts only, report/
degraded_notes.py words them (issue 53). No torch import: unit-tested on
verbatim records of each PyTorch version.
"""

from __future__ import annotations

import collections
import logging
import re
from typing import Any

from ..break_type import break_type
from .dynamo_logs import (
    PathClassifier,
    parse_graph_break_record,
    parse_limit_warning,
    parse_loop_skip,
    parse_recompile_record,
    strip_compile_id,
    summarize_reason,
)
from .graph_break_sites import graph_break_sites

_COMPILE_ID_RE = re.compile(r"^(\d+)/(\d+)$")
# A recompile's reason where torch gave none (results/model.RecompileReason; report/ words
# them): a recompile the compilation metrics list and no log explains (torch <= 2.4 compiles
# each instance of a module class separately), and a logged one that named no guard.
NO_GUARD_FAILURE_LOGGED = "no_guard_failure_logged"
UNKNOWN_GUARD_FAILURE = "unknown_guard_failure"


def build_report(snap: dict[str, Any], paths: PathClassifier) -> dict[str, Any]:
    """Combine a snapshot's sources into the variant's diagnostics (pure; unit-tested)."""
    records = snap.get("records", [])
    breaks = graph_break_sites(
        records,
        snap.get("break_reasons", []),
        snap.get("metrics", []),
        paths,
        metrics_complete=snap.get("metrics_complete", True),
    )
    limit = next(
        (
            parse_limit_warning(r["text"])
            for r in records
            if r["level"] >= logging.WARNING and "hit config." in r["text"]
        ),
        None,
    )
    recompiles = _recompiles(records, snap.get("metrics", []), limit, paths)
    fallbacks = _fallbacks(records, snap.get("metrics", []), limit, paths)
    counters = snap.get("counters", {})
    frames = counters.get("frames", {})
    skipped = max(0, int(frames.get("total", 0)) - int(frames.get("ok", 0)))
    cache = {
        k: int(v)
        for section in ("inductor", "aot_autograd")
        for k, v in counters.get(section, {}).items()
        if "cache" in k
    }
    report = {
        "recompiles": recompiles,
        "graph_breaks": breaks,
        "fallbacks_to_eager": max(skipped, len(fallbacks)),
        "fallbacks": fallbacks,
        "compile_phases_s": dict(snap.get("phases_s", {})),
        "cache": cache,
    }
    return report


def _recompiles(
    records: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    limit: dict[str, Any] | None,
    paths: PathClassifier,
) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for record in records:
        if record["logger"].endswith(("__recompiles", "__recompiles_verbose")):
            parsed = parse_recompile_record(record["text"])
            if parsed is not None:
                parsed["compile_id"] = record.get("compile_id")
                events.append(parsed)
    if limit is not None and limit["function"]:  # that attempt was refused, not compiled
        for index in range(len(events) - 1, -1, -1):
            if events[index]["function"] == limit["function"]:  # its newest failed guard
                limit["reason"] = (events[index]["reasons"] or [limit["reason"]])[0]
                del events[index]
                break
    logged_ids = {e["compile_id"] for e in events if e["compile_id"]}
    unmatched = collections.Counter(
        (e["function"], e["file"], e["line"]) for e in events if not e["compile_id"]
    )
    for entry in metrics:  # 2.3+: successful recompiles the log does not explain
        match = _COMPILE_ID_RE.match(str(entry.get("compile_id") or ""))
        if not match or not entry.get("co_name") or int(match.group(2)) == 0:
            continue
        code = (entry["co_name"], entry.get("co_filename"), entry.get("co_firstlineno"))
        if entry["compile_id"] in logged_ids or entry.get("fail_type"):
            continue
        if unmatched[code] > 0:  # logged, but without a compile id to match on
            unmatched[code] -= 1
            continue
        # torch's reason where it gave one; torch <= 2.4 logs none (a code: report/ words it)
        reason = entry.get("recompile_reason") or NO_GUARD_FAILURE_LOGGED
        events.append(
            {
                "function": entry["co_name"],
                "file": entry.get("co_filename") or "",
                "line": entry.get("co_firstlineno"),
                "reasons": [reason],
                "compile_id": entry["compile_id"],
            }
        )
    out = []
    for event in events:
        shown, origin = paths.locate(event["file"])
        reasons = [paths.relativize(r) for r in event["reasons"] or [UNKNOWN_GUARD_FAILURE]]
        out.append(
            {
                "function": event["function"],
                "file": shown,
                "origin": origin,
                "line": event["line"],
                "reason": strip_compile_id(reasons[0]),
                "reasons": reasons,
                "compile_id": event["compile_id"],
            }
        )
    out_report: dict[str, Any] = {"count": len(out), "events": out, "limit_hit": limit is not None}
    if limit is not None:  # the limit as facts: report/degraded_notes.py words its note
        out_report["limit"] = {
            key: value
            for key, value in {
                "function": limit["function"] or None,
                "file": paths.classify(limit["file"])[0] if limit["function"] else None,
                "line": limit["line"] if limit["function"] else None,
                "name": limit["limit"],
                "value": limit["value"],
                "reason": (
                    paths.relativize(strip_compile_id(limit["reason"])) if limit["reason"] else None
                ),
            }.items()
            if value is not None
        }
    return out_report


def _fallbacks(
    records: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    limit: dict[str, Any] | None,
    paths: PathClassifier,
) -> list[dict[str, Any]]:
    """One fallback per frame Dynamo gave up on entirely (keyed by file and function): its
    function, file, kind (graph_break, loop, limit, failed), the break's line and the
    break's type (torch's words, shortened: break_type)."""
    frames: dict[tuple[str, str], dict[str, Any]] = {}
    causes: dict[tuple[str, int], str] = {}  # break site -> type, for the 2.1-2.5 INFO record

    def add(file: str, function: str | None, kind: str, line: Any, kind_of: str | None) -> None:
        shown, _ = paths.classify(file)
        fallback = {"function": function, "file": shown, "kind": kind, "line": line}
        fallback["type"] = paths.relativize(kind_of) if kind_of is not None else None
        frames.setdefault(
            (shown, function or "?"), {k: v for k, v in fallback.items() if v is not None}
        )

    for record in records:
        parsed = None
        if record["logger"].endswith("__graph_breaks"):
            parsed = parse_graph_break_record(record["text"], record.get("exc", ""))
        if parsed:
            causes[(parsed["file"], parsed["line"])] = break_type(parsed["reason"])
        if parsed and parsed["fallback"]:
            kind = "loop" if "graph break in loop" in record["text"] else "graph_break"
            add(
                parsed["file"],
                parsed["function"],
                kind,
                parsed["line"],
                break_type(parsed["reason"]),
            )
        match = parse_loop_skip(record["text"])
        if match:
            cause = causes.get((match["file"], match["line"]))
            add(match["file"], match["function"], "loop", match["line"], cause)
    if limit is not None and limit["function"]:
        add(limit["file"] or "", limit["function"], "limit", None, None)
    for entry in metrics:
        if entry.get("fail_type") and entry.get("co_name"):
            reason = str(entry.get("fail_reason") or entry["fail_type"]).strip().splitlines()
            add(
                entry.get("co_filename") or "",
                entry["co_name"],
                "failed",
                None,
                break_type(summarize_reason(reason[0] if reason else "unknown reason")),
            )
    return list(frames.values())
