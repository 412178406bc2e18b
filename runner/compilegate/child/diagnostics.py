"""Why a compiled variant is slow: recompiles, graph breaks, frames that fell back to eager.

`CompileProbe` wraps everything the compiled copy does (measure.measure_variant) in the child
process, which may run torch 2.1 through 2.14. Each single source misses something on some
version (../shared/reference/torch-compile-instrumentation.md §3-§4), so they are combined:

* graph breaks: the `graph_breaks` artifact log (reason and file:line; misses data-dependent
  branches on 2.1-2.5) united with `torch._dynamo.utils.graph_break_reasons` (sees every break
  that ended a compiled subgraph, on every version, with its stack) and CompilationMetrics'
  graph op counts: one site per break (graph_break_sites.py);
* frames skipped entirely (a break inside a loop): `counters["frames"]` total - ok, failed
  CompilationMetrics (2.3+), the 2.6+ "falling back to eager" log text and the 2.1-2.5 INFO
  record "Skipping frame because there is a graph break in a for/while loop";
* recompiles: the `recompiles` artifact log (2.1: a tuple message; 2.2+: text), tagged with
  the compile id current when torch logged it, plus CompilationMetrics entries with a compile
  id N/k, k > 0 (2.3+) that no log record explains (torch 2.4 compiles each instance of a
  module class again without logging a guard failure); the limit-hit WARNING;
* CUDA graphs Inductor skipped, for a variant that asks for them (cuda_graph_skips.py): the
  `cudagraph_skips` counter and each reason.

Counting choice: `graph_breaks.count` is the number of breaks in the user's repository and
in installed libraries (`origin` "repo" or "library"): a transformers upgrade that adds a
break is what users want to see. torch's internal breaks (e.g. the optimizer's own
`graph_break()` when compile target is "step") stay in `sites` with origin "torch", last,
but are not counted.

Child-process only: standard library and torch; every private torch API is guarded.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from .compile_cost import KernelCounter, work_counts
from .cuda_graph_skips import CudaGraphSkipProbe, cuda_graph_report
from .diagnostics_report import build_report
from .dynamo_logs import (
    PathClassifier,
)

_PROBE_SUFFIXES = ("__graph_breaks", "__recompiles", "__recompiles_verbose")
_SKIP_LOGGER = "torch._dynamo.symbolic_convert"  # 2.1-2.5 log frame skips there at INFO


class CompileProbe:
    """Context manager around one compiled copy's run; `report()` afterwards.

    On enter it clears Dynamo's process-wide counters and lists, turns on the `graph_breaks`
    and `recompiles` artifact logs and attaches a handler to "torch._dynamo". Torch's own
    stderr handler is given a filter so those DEBUG records do not flood the child's output.
    On exit it snapshots everything (a later torch._dynamo.reset() clears some of it) and
    restores torch's default logging.
    """

    def __init__(self, repo_root: Path, *, cuda_graphs: bool = False) -> None:
        """`cuda_graphs`: the variant asks for CUDA graphs (cuda_graph_skips.py): its skips
        are recorded (also when it does not ask, if Inductor counted any)."""
        self.repo_root = Path(repo_root)
        self._graphs = CudaGraphSkipProbe() if cuda_graphs else None
        self._collector = _Collector()
        self._quiet = _DropProbeRecords()
        self._skip_level: int | None = None
        self._snapshot: dict[str, Any] | None = None
        self._kernels: KernelCounter | None = None
        self._kernel_count: int | None = None

    def __enter__(self) -> CompileProbe:
        _clear_dynamo_state()
        self._kernels = KernelCounter()
        _set_logs(on=True)
        dynamo_log = logging.getLogger("torch._dynamo")
        for handler in dynamo_log.handlers:
            handler.addFilter(self._quiet)
        dynamo_log.addHandler(self._collector)
        skip_log = logging.getLogger(_SKIP_LOGGER)
        self._skip_level = skip_log.level
        if skip_log.getEffectiveLevel() > logging.INFO:
            skip_log.setLevel(logging.INFO)
        if self._graphs is not None:
            self._graphs.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._kernel_count = self._kernels.count() if self._kernels is not None else None
            self._snapshot = take_snapshot(self._collector.records)
        finally:
            dynamo_log = logging.getLogger("torch._dynamo")
            dynamo_log.removeHandler(self._collector)
            for handler in dynamo_log.handlers:
                handler.removeFilter(self._quiet)
            if self._skip_level is not None:
                logging.getLogger(_SKIP_LOGGER).setLevel(self._skip_level)
            if self._graphs is not None:
                self._graphs.__exit__()
            _set_logs(on=False)

    def work_counts(self) -> dict[str, Any]:
        """Compile-work counts of the compiled copy's run (compile_cost.work_counts)."""
        snapshot = self._snapshot or take_snapshot(self._collector.records)
        try:
            return work_counts(snapshot, self._kernel_count)
        except Exception:  # never cost the user the measurement
            return work_counts({}, None)

    def report(self) -> dict[str, Any]:
        """The variant's diagnostics (schemas/result.schema.json); never raises."""
        snapshot = self._snapshot or take_snapshot(self._collector.records)
        try:
            paths = PathClassifier.for_torch(self.repo_root)
            report = build_report(snapshot, paths)
        except Exception as exc:  # diagnostics must never cost the user the measurement
            return {"diagnostics_error": f"{type(exc).__name__}: {exc}"[:500]}
        skips = (snapshot.get("counters") or {}).get("inductor", {}).get("cudagraph_skips", 0)
        if snapshot.get("counters_available") and (self._graphs is not None or skips):
            logged = self._graphs.logged if self._graphs is not None else []
            unlogged = self._graphs.unlogged if self._graphs is not None else []
            with contextlib.suppress(Exception):  # the rest of the diagnostics still count
                report["cuda_graphs"] = cuda_graph_report(skips, logged, unlogged, paths)
        return report


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


def _set_logs(*, on: bool) -> None:
    """Graph breaks and recompiles logged (on), or every log setting back to its default."""
    with contextlib.suppress(Exception):  # absent or changed: the other sources still work
        import torch._logging

        if on:
            torch._logging.set_logs(graph_breaks=True, recompiles=True)
        else:
            torch._logging.set_logs()


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
        if value is not None and hasattr(value, "clear"):
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
        snap["counters_available"] = True
    for reason in list(getattr(du, "graph_break_reasons", []) or []):
        # user_stack: the compiled frame's position first, then each inlined call, innermost
        # (the cause) last.
        stack = [
            {
                "file": getattr(frame, "filename", None),
                "line": getattr(frame, "lineno", None),
                "function": getattr(frame, "name", None),
            }
            for frame in list(getattr(reason, "user_stack", None) or [])
        ]
        snap["break_reasons"].append({"reason": str(getattr(reason, "reason", "")), "stack": stack})
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
        "graph_op_count",  # 0: the frame's graph before its break was empty (2.3+)
        "graph_node_count",  # compile_cost.work_counts
        "guard_count",
    )
    for entry in metrics:
        record = {f: _plain(getattr(entry, f, None)) for f in fields}
        record["kind"] = _record_kind(entry)
        snap["metrics"].append(record)
    snap["metrics_available"] = hasattr(du, "get_compilation_metrics") or hasattr(
        du, "_compilation_metrics"
    )
    # The metrics deque holds the newest 64 compiles: once full, the oldest are gone and its
    # entries can no longer be lined up with graph_break_reasons.
    maxlen = getattr(getattr(du, "_compilation_metrics", None), "maxlen", None)
    snap["metrics_complete"] = not (maxlen and len(snap["metrics"]) >= maxlen)
    snap["phases_s"] = _compile_phases(du)
    return snap


def _record_kind(entry: Any) -> str:
    """ "backward" for the lazily compiled backward's record (BwdCompilationMetrics on 2.3-2.5,
    a CompilationMetrics with is_forward=False later), else "forward"."""
    if type(entry).__name__.startswith("Bwd") or getattr(entry, "is_forward", True) is False:
        return "backward"
    return "forward"


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
