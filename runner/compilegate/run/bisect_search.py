"""The bisection's search (`compilegate bisect`, results/bisect.py): over first-parent
commits from the good end (index 0) to the bad end (the last), the first commit at which
each followed count changed, probing as few commits as a binary search needs; every commit
is probed at most once, whatever count asked for it.

A count can change more than once in the range (a host sync added at one commit, another at
a later one): after the first change is found, the search goes on from it to the bad end,
until the value found equals the bad end's. A commit whose probe failed (it does not import,
its step raises) is skipped, as `git bisect skip` does: a neighbour is probed instead, and
when only skipped commits lie between the last commit with the old value and the first
with the new one, the change is said to be one of them (`candidates`).

Pure: the probe is passed in (run/bisect_probe.py runs the real one), so the search is
tested offline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..results.bisect import (
    Change,
    Commit,
    CommitCounts,
    CountKey,
    Probe,
    Probed,
    ProbeRecord,
    Skipped,
    Value,
)


@dataclass
class Search:
    """The probes run so far (each commit once), in the order they ran."""

    commits: Sequence[Commit]
    probe: Probe
    clock: Callable[[], float] = time.perf_counter
    on_record: Callable[[int, ProbeRecord], None] = lambda number, record: None
    known: dict[int, ProbeRecord] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)

    def give(self, index: int, counts: CommitCounts) -> None:
        """The commit at `index` as counted elsewhere (a stored baseline): never probed."""
        self.known[index] = ProbeRecord(self.commits[index], counts, 0.0)

    def at(self, index: int) -> Probed:
        """The commit at `index`, probed now unless it already was (`on_record` hears each
        probe as it ends, numbered from 1)."""
        if index not in self.known:
            started = self.clock()
            outcome = self.probe(self.commits[index])
            record = ProbeRecord(self.commits[index], outcome, self.clock() - started)
            self.known[index] = record
            self.order.append(index)
            self.on_record(len(self.order), record)
        return self.known[index].outcome

    @property
    def records(self) -> list[ProbeRecord]:
        return [self.known[index] for index in self.order]

    def changes(self, key: CountKey) -> list[Change]:
        """Every change of `key` from the good end to the bad end, first one first. Both ends
        must have been probed with counts (the caller checks)."""
        last = len(self.commits) - 1
        lo = 0
        found: list[Change] = []
        while True:
            ref, end = _value(self.at(lo), key), _value(self.at(last), key)
            if ref == end or lo == last:
                return found
            change = self._first_change(key, lo, last, ref)
            found.append(change)
            if change.candidates:  # not pinned: the search cannot go on past a guess
                return found
            lo = self.commits.index(change.first)

    def _first_change(self, key: CountKey, lo: int, hi: int, ref: Value) -> Change:
        """Between `lo` (value `ref`) and `hi` (another value): the first index whose value
        is not `ref` after the last one that is, skipping commits that failed."""
        while hi - lo > 1:
            mid = self._next_probe(lo, hi)
            if mid is None:
                break
            if _value(self.at(mid), key) == ref:
                lo = mid
            else:
                hi = mid
        between = tuple(self.commits[i] for i in range(lo + 1, hi))
        before, after = self.at(lo), self.at(hi)
        assert isinstance(before, CommitCounts) and isinstance(after, CommitCounts)
        return Change(
            key,
            ref,
            after.value(key),
            self.commits[lo],
            self.commits[hi],
            before,
            after,
            between,
        )

    def _next_probe(self, lo: int, hi: int) -> int | None:
        """The commit nearest the middle of (lo, hi) not known to be skipped; None when every
        commit between is."""
        middle = (lo + hi) // 2
        order = sorted(range(lo + 1, hi), key=lambda i: (abs(i - middle), i))
        for index in order:
            if not isinstance(self.at(index), Skipped):
                return index
        return None


def _value(probed: Probed, key: CountKey) -> Value:
    if isinstance(probed, Skipped):
        raise ValueError("a skipped commit has no value")
    return probed.value(key)
