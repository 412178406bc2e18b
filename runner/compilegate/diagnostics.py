"""Why a compiled variant is slow: recompiles, graph breaks, frames that fell back to eager.

`CompileProbe` wraps everything the compiled copy does (measure.measure_variant) in the child
process, which may run torch 2.1 through 2.14. Each single source misses something on some
version (../shared/reference/torch-compile-instrumentation.md §3-§4), so they are combined:

* graph breaks: the `graph_breaks` artifact log (reason and file:line; misses data-dependent
  branches on 2.1-2.5) united with `torch._dynamo.utils.graph_break_reasons` (sees every break
  that ended a compiled subgraph, on every version), de-duplicated on (file, line);
* frames skipped entirely (a break inside a loop): `counters["frames"]` total - ok, failed
  CompilationMetrics (2.3+), the 2.6+ "falling back to eager" log text and the 2.1-2.5 INFO
  record "Skipping frame because there is a graph break in a for/while loop";
* recompiles: the `recompiles` artifact log (2.1: a tuple message; 2.2+: text), tagged with
  the compile id current when torch logged it, plus CompilationMetrics entries with a compile
  id N/k, k > 0 (2.3+) that no log record explains (torch 2.4 compiles each instance of a
  module class again without logging a guard failure); the limit-hit WARNING.

Counting choice: `graph_breaks.count` is the number of unique break sites *in the user's
repository*. Sites inside torch (e.g. the optimizer's own `graph_break()` when compile target
is "step"), in installed packages or in compilegate's own training loop stay in `sites` with
`in_repo: false`, after the user's sites, but are not counted: the user cannot fix them.

Child-process only: standard library and torch; every private torch API is guarded.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import re
from pathlib import Path
from typing import Any

from .dynamo_logs import (
    PathClassifier,
    break_type,
    parse_graph_break_record,
    parse_limit_warning,
    parse_loop_skip,
    parse_recompile_record,
    strip_compile_id,
    summarize_reason,
)

_PROBE_SUFFIXES = ("__graph_breaks", "__recompiles", "__recompiles_verbose")
_SKIP_LOGGER = "torch._dynamo.symbolic_convert"  # 2.1-2.5 log frame skips there at INFO

_COMPILE_ID_RE = re.compile(r"^(\d+)/(\d+)$")


class CompileProbe:
    """Context manager around one compiled copy's run; `report()` afterwards.

    On enter it clears Dynamo's process-wide counters and lists, turns on the `graph_breaks`
    and `recompiles` artifact logs and attaches a handler to "torch._dynamo". Torch's own
    stderr handler is given a filter so those DEBUG records do not flood the child's output.
    On exit it snapshots everything (a later torch._dynamo.reset() clears some of it) and
    restores torch's default logging.
    """

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = Path(repo_root)
        self._collector = _Collector()
        self._quiet = _DropProbeRecords()
        self._skip_level: int | None = None
        self._snapshot: dict[str, Any] | None = None

    def __enter__(self) -> CompileProbe:
        _clear_dynamo_state()
        _set_logs(graph_breaks=True, recompiles=True)
        dynamo_log = logging.getLogger("torch._dynamo")
        for handler in dynamo_log.handlers:
            handler.addFilter(self._quiet)
        dynamo_log.addHandler(self._collector)
        skip_log = logging.getLogger(_SKIP_LOGGER)
        self._skip_level = skip_log.level
        if skip_log.getEffectiveLevel() > logging.INFO:
            skip_log.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._snapshot = take_snapshot(self._collector.records)
        finally:
            dynamo_log = logging.getLogger("torch._dynamo")
            dynamo_log.removeHandler(self._collector)
            for handler in dynamo_log.handlers:
                handler.removeFilter(self._quiet)
            if self._skip_level is not None:
                logging.getLogger(_SKIP_LOGGER).setLevel(self._skip_level)
            _set_logs()

    def report(self) -> dict[str, Any]:
        """The variant's diagnostics (schemas/result.schema.json); never raises."""
        snapshot = self._snapshot or take_snapshot(self._collector.records)
        try:
            return build_report(snapshot, PathClassifier.for_torch(self.repo_root))
        except Exception as exc:  # diagnostics must never cost the user the measurement
            return {"degraded": [f"compile diagnostics failed: {type(exc).__name__}: {exc}"]}


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[dict[str, Any]] = []  # capture_record() dicts, in emit order

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.records.append(capture_record(record))
        except Exception:  # a logging handler must not raise into torch
            pass


class _DropProbeRecords(logging.Filter):
    """Keeps the records the probe turned on away from torch's own stderr handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.endswith(_PROBE_SUFFIXES):
            return False
        return not (record.name == _SKIP_LOGGER and record.levelno < logging.WARNING)


def capture_record(record: logging.LogRecord) -> dict[str, Any]:
    """The parts of a log record the parsers need, plus the compile id current at emit."""
    if isinstance(record.msg, tuple):  # 2.1 recompiles: ('Recompiling function ...', '...')
        text = "\n".join(str(part) for part in record.msg)
    else:
        text = record.getMessage()
    exc = record.exc_info[1] if isinstance(record.exc_info, tuple) else None
    return {
        "logger": record.name,
        "level": record.levelno,
        "text": text,
        "exc": "" if exc is None else str(exc),
        "compile_id": _current_compile_id(),
    }


def _current_compile_id() -> str | None:
    try:
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
    except Exception:
        return None
    return None if compile_id is None else str(compile_id)


def _set_logs(**artifacts: bool) -> None:
    with contextlib.suppress(Exception):  # absent or changed: the other sources still work
        import torch._logging

        torch._logging.set_logs(**artifacts)


def _clear_dynamo_state() -> None:
    """Counters and lists are process-wide; torch._dynamo.reset() does not clear counters."""
    try:
        import torch._dynamo.utils as du
    except Exception:
        return
    for name in (
        "counters",
        "graph_break_reasons",
        "guard_failures",
        "compilation_time_metrics",
        "frame_phase_timing",
        "cumulative_time_spent_ns",
        "_compilation_metrics",
    ):
        value = getattr(du, name, None)  # _compilation_metrics: the 2.2-2.14 metrics deque
        if hasattr(value, "clear"):
            value.clear()


def take_snapshot(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Copy what torch holds now into plain data (each source guarded, missing → empty)."""
    snap: dict[str, Any] = {
        "records": list(records),
        "counters": {},
        "break_reasons": [],
        "metrics": [],
        "phases_s": {},
    }
    try:
        import torch._dynamo.utils as du
    except Exception:
        return snap
    with contextlib.suppress(Exception):
        snap["counters"] = {k: dict(v) for k, v in du.counters.items()}
    for reason in list(getattr(du, "graph_break_reasons", []) or []):
        stack = list(getattr(reason, "user_stack", None) or [])
        last = stack[-1] if stack else None
        snap["break_reasons"].append(
            {
                "reason": str(getattr(reason, "reason", "")),
                "file": getattr(last, "filename", None),
                "line": getattr(last, "lineno", None),
                "function": getattr(last, "name", None),
            }
        )
    try:
        if hasattr(du, "get_compilation_metrics"):
            metrics = du.get_compilation_metrics()
        else:
            metrics = list(getattr(du, "_compilation_metrics", []) or [])
    except Exception:
        metrics = []
    fields = (
        "compile_id",
        "co_name",
        "co_filename",
        "co_firstlineno",
        "cache_size",
        "fail_type",
        "fail_reason",
        "recompile_reason",
    )
    for entry in metrics:
        snap["metrics"].append({f: _plain(getattr(entry, f, None)) for f in fields})
    snap["phases_s"] = _compile_phases(du)
    return snap


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def _compile_phases(du: Any) -> dict[str, float]:
    try:
        if hasattr(du, "calculate_time_spent"):  # 2.4+
            phases = du.calculate_time_spent()
        else:  # 2.1-2.3: per frame {phase: s}
            phases = {}
            for timings in getattr(du, "frame_phase_timing", {}).values():
                for key, seconds in timings.items():
                    phases[key] = phases.get(key, 0.0) + seconds
        return {str(k): round(float(v), 4) for k, v in phases.items()}
    except Exception:
        return {}


def build_report(snap: dict[str, Any], paths: PathClassifier) -> dict[str, Any]:
    """Combine a snapshot's sources into the variant's diagnostics (pure; unit-tested)."""
    records = snap.get("records", [])
    breaks = _graph_breaks(records, snap.get("break_reasons", []), paths)
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
        "fallback_reasons": fallbacks,
        "compile_phases_s": dict(snap.get("phases_s", {})),
        "cache": cache,
    }
    report["degraded"] = describe_degradation(report)
    return report


def _graph_breaks(
    records: list[dict[str, Any]], break_reasons: list[dict[str, Any]], paths: PathClassifier
) -> dict[str, Any]:
    sites: dict[tuple[str, int], dict[str, Any]] = {}

    def site(file: str, line: int) -> dict[str, Any]:
        shown, in_repo = paths.classify(file)
        return sites.setdefault(
            (shown, line),
            {
                "file": shown,
                "line": line,
                "reason": "",
                "count": 0,
                "in_repo": in_repo,
                "sources": [],
                "_log": 0,
                "_reasons": 0,
            },
        )

    for record in records:
        if not record["logger"].endswith("__graph_breaks"):
            continue
        parsed = parse_graph_break_record(record["text"], record.get("exc", ""))
        if parsed is None:
            continue
        entry = site(parsed["file"], parsed["line"])
        entry["_log"] += 1
        entry["reason"] = entry["reason"] or parsed["reason"]
        if "log" not in entry["sources"]:
            entry["sources"].append("log")
    for reason in break_reasons:
        if reason.get("file") is None or reason.get("line") is None:
            continue
        entry = site(reason["file"], int(reason["line"]))
        entry["_reasons"] += 1
        entry["reason"] = entry["reason"] or summarize_reason(reason.get("reason", ""))
        if "graph_break_reasons" not in entry["sources"]:
            entry["sources"].append("graph_break_reasons")
    out = []
    for entry in sites.values():  # one log record or one subgraph per compile that broke here
        entry["count"] = max(entry.pop("_log"), entry.pop("_reasons"), 1)
        out.append(entry)
    out.sort(key=lambda s: (not s["in_repo"], s["file"], s["line"]))
    return {"count": sum(1 for s in out if s["in_repo"]), "sites": out}


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
        reason = entry.get("recompile_reason") or (
            "no guard failure was logged (torch <= 2.4 compiles each instance of a module "
            "class separately)"
        )
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
        shown, _ = paths.classify(event["file"])
        reasons = event["reasons"] or ["unknown guard failure"]
        out.append(
            {
                "function": event["function"],
                "file": shown,
                "line": event["line"],
                "reason": strip_compile_id(reasons[0]),
                "reasons": reasons,
                "compile_id": event["compile_id"],
            }
        )
    message = None
    if limit is not None:
        where = ""
        if limit["function"]:
            where = f"{limit['function']} ({paths.classify(limit['file'])[0]}:{limit['line']}) "
        last = f"; last reason: {strip_compile_id(limit['reason'])}" if limit["reason"] else ""
        message = (
            f"recompile limit hit: {where}runs eagerly from now on "
            f"(config.{limit['limit']} = {limit['value']}{last})"
        )
    return {
        "count": len(out),
        "events": out,
        "limit_hit": limit is not None,
        "limit_message": message,
    }


def _fallbacks(
    records: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    limit: dict[str, Any] | None,
    paths: PathClassifier,
) -> list[str]:
    """One sentence per frame Dynamo gave up on entirely (keyed by file and function)."""
    frames: dict[tuple[str, str], str] = {}
    causes: dict[tuple[str, int], str] = {}  # break site -> type, for the 2.1-2.5 INFO record

    def add(file: str, function: str | None, why: str) -> None:
        shown, _ = paths.classify(file)
        frames.setdefault(
            (shown, function or "?"),
            f"{function or 'a frame'} in {shown} fell back to eager: {why}",
        )

    for record in records:
        parsed = None
        if record["logger"].endswith("__graph_breaks"):
            parsed = parse_graph_break_record(record["text"], record.get("exc", ""))
        if parsed:
            causes[(parsed["file"], parsed["line"])] = break_type(parsed["reason"])
        if parsed and parsed["fallback"]:
            shown, _ = paths.classify(parsed["file"])
            loop = " in a loop" if "graph break in loop" in record["text"] else ""
            add(
                parsed["file"],
                parsed["function"],
                f"graph break{loop} at {shown}:{parsed['line']} ({break_type(parsed['reason'])})",
            )
        match = parse_loop_skip(record["text"])
        if match:
            shown, _ = paths.classify(match["file"])
            cause = causes.get((match["file"], match["line"]))
            add(
                match["file"],
                match["function"],
                f"graph break in a loop at {shown}:{match['line']}"
                + (f" ({cause})" if cause else ""),
            )
    if limit is not None and limit["function"]:
        add(
            limit["file"] or "",
            limit["function"],
            f"recompile limit hit (config.{limit['limit']} = {limit['value']})",
        )
    for entry in metrics:
        if entry.get("fail_type") and entry.get("co_name"):
            reason = str(entry.get("fail_reason") or entry["fail_type"]).strip().splitlines()
            add(
                entry.get("co_filename") or "",
                entry["co_name"],
                break_type(summarize_reason(reason[0] if reason else "unknown reason")),
            )
    return list(frames.values())


def describe_degradation(report: dict[str, Any]) -> list[str]:
    """Plain-words sentences for the table's notes: breaks, fallbacks, the recompile limit."""
    notes = []
    sites = [s for s in report["graph_breaks"]["sites"] if s["in_repo"]]
    if sites:
        shown = "; ".join(f"{s['file']}:{s['line']} {break_type(s['reason'])}" for s in sites[:3])
        more = f"; and {len(sites) - 3} more" if len(sites) > 3 else ""
        plural = "s" if len(sites) != 1 else ""
        notes.append(f"{len(sites)} graph break{plural} in your code ({shown}{more})")
    notes.extend(report["fallback_reasons"])
    unexplained = report["fallbacks_to_eager"] - len(report["fallback_reasons"])
    if unexplained > 0:
        notes.append(f"{unexplained} frame(s) fell back to eager (torch gave no reason)")
    if report["recompiles"]["limit_hit"]:
        notes = [n for n in notes if "recompile limit hit (" not in n]
        notes.append(report["recompiles"]["limit_message"])
    return notes
