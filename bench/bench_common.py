"""What the power benches share (bench/gate_power.py, bench/paired_power.py): load that comes
and goes, the step time the gate compares, what a report flagged, and a run's manifest."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from compilegate.results.model import Step, parse
from compilegate.results.processes import (
    compiled_values,
    eager_values,
    geometric_mean,
    step_processes,
    variant_processes,
)

BUSY_LOOP = "while True: pass"


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` processes spinning on a core each, for the duration of the block."""
    spinners = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()


@contextmanager
def intermittent_busy_loops(count: int, period_s: float) -> Iterator[None]:
    """`count` busy loops that come and go: on for `period_s`, off for `period_s`, … — a
    neighbour's jobs starting and ending on a shared runner. Without a period, always on."""
    if not period_s:
        with busy_loops(count):
            yield
        return
    import threading

    stop = threading.Event()

    def cycle() -> None:
        while not stop.is_set():
            spinners = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]
            stop.wait(period_s)
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
            stop.wait(period_s)

    worker = threading.Thread(target=cycle, daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()


def first_step(document: dict) -> Step:
    """The document's first step, typed at the door (results/model.parse); a stored
    baseline (with its history) is read as one."""
    role = "baseline" if any("history" in step for step in document["steps"]) else "result"
    return parse(document, "bench document", role).steps[0]


def fastest_ms(document: dict, side: str) -> float:
    """The step time the gate compares: fastest iterations, geometric mean over processes."""
    step = first_step(document)
    if side == "eager":
        return geometric_mean(eager_values(step_processes(step), per_yardstick=False))
    records = variant_processes(step.variants[0])
    return geometric_mean(compiled_values(records, per_yardstick=False))


def flagged(report, metrics: tuple[str, ...] | None = None, verdict: str = "regression") -> bool:
    return any(
        r.verdict == verdict and (metrics is None or r.metric in metrics) for r in report.rows()
    )


def change_of(reports: list, metrics: tuple[str, ...]) -> str:
    """The median change the gate measured on the first of `metrics` every report has."""
    for metric in metrics:
        changes = [
            row.change for r in reports for row in r.rows(metric=metric) if row.change is not None
        ]
        if len(changes) == len(reports) and changes:
            return f"{metric} {statistics.median(changes):+.1f}%"
    return "-"


def new_manifest(args: argparse.Namespace) -> dict:
    """What a bench run records beside its results: how it was run and the machine's load."""
    return {
        "command": " ".join(sys.argv),
        "load": args.load,
        "load_period_s": args.load_period,
        "iterations": args.iterations,
        "threads": args.threads,
        "variant_processes": args.processes,
        "load_before": os.getloadavg()[0],
        "started": time.time(),
        "cases": [],
    }
