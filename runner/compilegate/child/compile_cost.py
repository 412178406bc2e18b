"""What a compile cost: wall seconds, CPU seconds of the process tree, torch's own work counts.

CPU seconds (`tree_cpu_s`). Inductor compiles in this process, in compiler children it waits
for (g++ on CPU) and in a pool of worker processes that stays alive for the life of the
process (torch 2.4's ProcessPoolExecutor workers; the `compile_worker` sidecar and its pool
on newer versions, for Triton). `getrusage(RUSAGE_CHILDREN)` counts a child only once it has
exited and been waited for, so a live pool's work is missed: on torch 2.4.1 with this
project's 2-core CPU, 2.3 s of a tiny MLP's 14 s compile CPU was in three live workers at the
end of the compile. So the CPU of the whole tree is read at both ends of the compile window:
RUSAGE_SELF (every thread of this process) + RUSAGE_CHILDREN (reaped descendants) + for every
live descendant (found by walking the parent links in /proc) its own user+system time and
that of the children *it* reaped (stat fields 14-17). A descendant reaped in between moves
from the /proc sum into RUSAGE_CHILDREN (or its parent's cutime), so nothing is counted twice
or lost. One /proc walk costs a few milliseconds; it is done at the window's two ends only.
Rejected: TORCHINDUCTOR_COMPILE_THREADS=1 with RUSAGE_SELF changes the compile being
measured (kernels compile serially: longer wall time than the user gets); shutting the pool
down and waiting for it makes every later compile in the process restart it. Without /proc
(macOS) the live workers are missed and `cpu_method` says so.

Work counts (`work_counts`): deterministic for a given step, torch version and config, so
they move only with the code (shared/reference/compile-time-measurement.md §7: identical in
8 runs idle and loaded while wall time moved ×3.4). Availability per torch version, checked
at run time on 2.4.1 and 2.13.0 (all six) and in the wheel sources for the rest:

    graphs                   counters["stats"]["unique_graphs"]            2.1+
    generated_kernels        torch._inductor.metrics.generated_kernel_count 2.1+ (a delta)
    compile_records          forward CompilationMetrics records            2.3+ (2.2: private deque)
    backward_compile_records backward records (BwdCompilationMetrics on 2.4, is_forward=False
                             on 2.13): the lazily compiled backward         2.3+
    fx_nodes                 Σ graph_node_count of the forward records     2.3+
    guards                   Σ guard_count of the forward records          2.3+

A count torch does not offer is None. Child-process only: standard library and torch.
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
from dataclasses import dataclass
from typing import Any

PROC = "/proc"


@dataclass(frozen=True)
class Clock:
    """Wall and CPU time of this process tree at one instant, seconds."""

    wall_s: float
    cpu_s: float


def now() -> Clock:
    return Clock(time.perf_counter(), tree_cpu_s())


def elapsed(start: Clock, end: Clock) -> Clock:
    return Clock(end.wall_s - start.wall_s, end.cpu_s - start.cpu_s)


def cpu_method() -> str:
    """How tree_cpu_s counts: with the live descendants (Linux), or reaped ones only."""
    return "rusage+proc" if os.path.isdir(f"{PROC}/self") else "rusage"


def tree_cpu_s() -> float:
    """CPU seconds used so far by this process, its reaped descendants and its live ones."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    return total + live_descendants_cpu_s(os.getpid())


def live_descendants_cpu_s(root: int, proc: str = PROC) -> float:
    """Σ (utime + stime + cutime + cstime) of every live descendant of `root`, seconds."""
    try:
        names = os.listdir(proc)
    except OSError:
        return 0.0
    children: dict[int, list[tuple[int, float]]] = {}
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for name in names:
        if not name.isdigit():
            continue
        parsed = parse_stat(_read(f"{proc}/{name}/stat"), ticks)
        if parsed is not None:
            parent, cpu_s = parsed
            children.setdefault(parent, []).append((int(name), cpu_s))
    total, stack, seen = 0.0, [root], {root}
    while stack:
        for pid, cpu_s in children.get(stack.pop(), ()):
            if pid not in seen:
                seen.add(pid)
                total += cpu_s
                stack.append(pid)
    return total


def parse_stat(text: str | None, ticks: int) -> tuple[int, float] | None:
    """(parent pid, utime+stime+cutime+cstime seconds) from a /proc/<pid>/stat line.

    The command name (field 2) is in parentheses and may hold spaces or ')': the fields
    after it are read from the last ')'."""
    if not text or ")" not in text:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    try:
        parent = int(fields[1])
        cpu_ticks = sum(int(value) for value in fields[11:15])
    except (IndexError, ValueError):
        return None
    return parent, cpu_ticks / ticks


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:  # the process ended between listdir and open
        return None


class KernelCounter:
    """Inductor's generated-kernel count is process-wide and never cleared: count a delta."""

    def __init__(self) -> None:
        self.start = _generated_kernels()

    def count(self) -> int | None:
        end = _generated_kernels()
        return None if end is None or self.start is None else end - self.start


def _generated_kernels() -> int | None:
    with contextlib.suppress(Exception):
        import torch._inductor.metrics as metrics

        value = getattr(metrics, "generated_kernel_count", None)
        return int(value) if isinstance(value, int) else None
    return None


def work_counts(snapshot: dict[str, Any], generated_kernels: int | None) -> dict[str, Any]:
    """The compile-work counts from a diagnostics snapshot (pure; unit-tested).

    `snapshot["metrics"]` holds one dict per CompilationMetrics record with `kind`
    ("forward"/"backward"), `graph_node_count` and `guard_count`; `metrics_available` says
    whether this torch keeps such records at all."""
    graphs = ((snapshot.get("counters") or {}).get("stats") or {}).get("unique_graphs", 0)
    available = snapshot.get("counters_available", False) and isinstance(graphs, int)
    out: dict[str, Any] = {
        "graphs": int(graphs) if available else None,
        "fx_nodes": None,
        "guards": None,
        "generated_kernels": generated_kernels,
        "compile_records": None,
        "backward_compile_records": None,
    }
    if not snapshot.get("metrics_available", False):
        return out
    records = snapshot.get("metrics") or []
    forward = [r for r in records if r.get("kind") != "backward"]
    out["compile_records"] = len(forward)
    out["backward_compile_records"] = len(records) - len(forward)
    out["fx_nodes"] = _sum_field(forward, "graph_node_count")
    out["guards"] = _sum_field(forward, "guard_count")
    return out


def _sum_field(records: list[dict[str, Any]], field: str) -> int | None:
    values = [r.get(field) for r in records]
    if any(v is not None and not isinstance(v, int) for v in values):
        return None
    if records and all(v is None for v in values):
        return None  # this torch's records lack the field
    return sum(v for v in values if isinstance(v, int))
