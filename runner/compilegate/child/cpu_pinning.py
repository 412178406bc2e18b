"""The child pinned to CPUs during its timed blocks (child process), as pyperf does: the
scheduler moving a timed thread from core to core (cold caches, another core's frequency) is
one more source of noise, and on a shared machine the one it stays on is always the same.

As many CPUs as the step runs threads (`threads`, else torch's own count), so `threads: 4`
still has 4 cores; the last ones the process may use (the kernel steers most interrupts to
CPU 0). Every thread of the process is pinned — torch's intra-op pool was started before, and
on Linux an affinity belongs to a thread — and each gets its own mask back after the block.
Nothing is pinned where the platform cannot (no `os.sched_setaffinity`: macOS, Windows) or
where it would take nothing away (as many threads as CPUs).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator


def pinned_cpus(threads: int, allowed: Iterable[int]) -> list[int] | None:
    """The CPUs a process running `threads` threads is pinned to: the last `threads` of the
    `allowed` ones; None when that would be all of them (or threads is not positive)."""
    cpus = sorted(allowed)
    if threads < 1 or threads >= len(cpus):
        return None
    return cpus[-threads:]


@contextlib.contextmanager
def pinned(threads: int) -> Iterator[list[int] | None]:
    """Every thread of this process pinned to `pinned_cpus` for the block, each restored
    after; yields the CPUs, or None where nothing was pinned."""
    setter = getattr(os, "sched_setaffinity", None)
    getter = getattr(os, "sched_getaffinity", None)
    if setter is None or getter is None:
        yield None
        return
    try:
        cpus = pinned_cpus(threads, getter(0))
    except OSError:
        cpus = None
    if cpus is None:
        yield None
        return
    saved: dict[int, set[int]] = {}
    for tid in _thread_ids():
        try:
            saved[tid] = getter(tid)
            setter(tid, cpus)
        except OSError:  # the thread ended meanwhile, or may not be moved
            saved.pop(tid, None)
    try:
        yield cpus if saved else None
    finally:
        for tid, mask in saved.items():
            with contextlib.suppress(OSError):
                setter(tid, mask)


def _thread_ids() -> list[int]:
    """This process's threads (Linux: /proc/self/task); else the calling thread alone."""
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except (OSError, ValueError):
        return [0]
