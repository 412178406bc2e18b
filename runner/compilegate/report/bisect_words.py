"""Every word `compilegate bisect` says: each probe as it ends, each moved count's first
commit with its change and site, the probes' tally, and the one line when nothing moved.

    host syncs 28 → 30 (+2 aten::_local_scalar_dense at model.py:73) first at 1a2b3c4
    'add nan check'
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gate.judges.step_work import named_changes, site_changes
from ..results.bisect import Change, Commit, CommitCounts, CountKey, ProbeRecord, Value
from .absence_words import recompile_reason_words
from .row_words.compile_cost import COUNT_NAMES as COMPILE_COUNT_NAMES
from .row_words.step_work import COUNT_NAMES as STEP_COUNT_NAMES

COUNT_WORDS = {
    **STEP_COUNT_NAMES,
    **COMPILE_COUNT_NAMES,
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles",
    "numerics": "numerics",
}
# Names or sites said per change; the rest counted.
SHOWN = 2
# Counts said with their sites wherever they appear in a line.
SITED = frozenset({"host_syncs", "graph_breaks", "recompiles"})


def commit_words(commit: Commit) -> str:
    """`1a2b3c4 'add nan check'`."""
    return f"{commit.short} {commit.subject!r}"


def probe_words(number: int, record: ProbeRecord) -> str:
    """One probe as it ends: `probe 3: 1a2b3c4 'add nan check' counted (4.2 s)`, or skipped
    with its reason."""
    head = f"probe {number}: {commit_words(record.commit)}"
    skipped = record.skipped
    if skipped is not None:
        return f"{head} skipped ({record.wall_s:.1f} s): {skipped.reason}"
    return f"{head} counted ({record.wall_s:.1f} s)"


def subject_words(key: CountKey) -> str:
    """`step gate, eager` / `step gate, variant default`."""
    what = "eager" if key.subject == "eager" else f"variant {key.subject}"
    return f"step {key.step}, {what}"


def change_words(change: Change) -> str:
    """One change of a count, with the names or sites that moved it and where it began:
    `step gate, eager: host syncs 28 → 30 (+2 aten::_local_scalar_dense at model.py:73)
    first at 1a2b3c4 'add nan check'`."""
    return answer_lines([change])[0]


def answer_lines(changes: Sequence[Change]) -> list[str]:
    """The changes as the answer says them: one line per first commit and subject, its
    counts in the order given (the first with the names that moved it; host syncs, graph
    breaks and recompiles always with their sites), the commit last."""
    groups: dict[tuple[str, str, str], list[Change]] = {}
    for change in changes:
        group = (change.first.sha, change.key.step, change.key.subject)
        groups.setdefault(group, []).append(change)
    lines = []
    for together in groups.values():
        said = [_moved_words(c, detailed=i == 0) for i, c in enumerate(together)]
        first = together[0]
        lines.append(f"{subject_words(first.key)}: {', '.join(said)} {_where(first)}")
    return lines


def _moved_words(change: Change, *, detailed: bool) -> str:
    moved = f"{COUNT_WORDS[change.key.count]} {_value(change.before)} → {_value(change.after)}"
    if detailed or change.key.count in SITED:
        detail = _detail(change)
        if detail:
            moved += f" ({detail})"
    return moved


def _where(change: Change) -> str:
    if change.pinned:
        return f"first at {commit_words(change.first)}"
    listed = ", ".join(commit_words(c) for c in (*change.candidates, change.first))
    return f"first at one of {listed} (the others were skipped)"


def nothing_moved_words(
    good: Commit, bad: Commit, followed: Sequence[str], records: Sequence[ProbeRecord]
) -> str:
    """The one line of a range where no followed count moved."""
    which = "no count" if not followed else "none of " + ", ".join(COUNT_WORDS[c] for c in followed)
    total_s = sum(r.wall_s for r in records)
    return (
        f"nothing moved between {commit_words(good)} and {commit_words(bad)}: {which} "
        f"changed ({len(records)} {_probes(len(records))}, {total_s:.1f} s)"
    )


def tally_words(records: Sequence[ProbeRecord], commits: int) -> str:
    """`7 probes of 32 commits in 41.3 s (1 skipped: 5e6f7a8)`."""
    total_s = sum(r.wall_s for r in records)
    skipped = [r.commit.short for r in records if r.skipped is not None]
    line = f"{len(records)} {_probes(len(records))} of {commits} commits in {total_s:.1f} s"
    if skipped:
        line += f" ({len(skipped)} skipped: {', '.join(skipped)})"
    return line


def end_failed_words(which: str, commit: Commit, reason: str) -> str:
    """Why a bisection could not start: an end that could not be counted."""
    return f"the {which} end {commit_words(commit)} could not be counted: {reason}"


def against_words(torch_there: str | None, torch_here: str | None, path: str) -> str:
    """Why a baseline cannot be the good end: counted under another torch."""
    return (
        f"--against {path}: counted under torch {torch_there}, this interpreter has torch "
        f"{torch_here}: counts differ between versions; give --good COMMIT instead"
    )


def _probes(number: int) -> str:
    return "probe" if number == 1 else "probes"


def _value(value: Value) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _detail(change: Change) -> str:
    key = change.key
    before, after = change.counts_before, change.counts_after
    if key.count == "graph_breaks":
        return _sites(_break_sites(before, key), _break_sites(after, key))
    if key.count == "recompiles":
        return _sites(_recompile_sites(before, key), _recompile_sites(after, key))
    if key.count == "numerics":
        return ""
    old, new = before.subject(key), after.subject(key)
    if old is None or new is None or old.step_work is None or new.step_work is None:
        return ""
    grew = _grew(change)
    moved = named_changes(old.step_work, new.step_work, key.count)
    named = [item for item in moved if (item[1] > 0) == grew][:SHOWN]
    if not named:
        return ""
    words = [f"{delta:+,} {name}" for name, delta in named]
    if key.count == "host_syncs":  # where eager's code waits: the `.item()` sites
        eager_key = CountKey(key.step, "eager", key.count)
        old_eager, new_eager = before.subject(eager_key), after.subject(eager_key)
        if old_eager is not None and new_eager is not None:
            if old_eager.step_work is not None and new_eager.step_work is not None:
                at = _unshifted(site_changes(old_eager.step_work, new_eager.step_work))
                sites = [site for site in at if (site[1] > 0) == grew][:SHOWN]
                if sites:
                    words[0] += " at " + ", ".join(site for site, _ in sites)
    return ", ".join(words)


def _break_sites(counts: CommitCounts, key: CountKey) -> dict[str, str]:
    subject = counts.subject(key)
    breaks = subject.graph_breaks if subject is not None else None
    if breaks is None:
        return {}
    return {_at(s.file, s.line): s.reason for s in breaks.sites}


def _recompile_sites(counts: CommitCounts, key: CountKey) -> dict[str, str]:
    subject = counts.subject(key)
    recompiles = subject.recompiles if subject is not None else None
    if recompiles is None:
        return {}
    return {_at(e.file, e.line): recompile_reason_words(e.reason) for e in recompiles.events}


def _at(file: str, line: int | None) -> str:
    return f"{file}:{line}" if line is not None else file


def _sites(before: dict[str, str], after: dict[str, str]) -> str:
    """`new at model.py:27: data-dependent branch`; `gone at …`."""
    added = [f"new at {site}: {_short(after[site])}" for site in after if site not in before]
    gone = [f"gone at {site}" for site in before if site not in after]
    return "; ".join((added + gone)[:SHOWN])


def _short(reason: str) -> str:
    line = " ".join(reason.split())
    return line if len(line) <= 120 else line[:119] + "…"


def summary_markdown(good: Commit, bad: Commit, lines: Sequence[str]) -> str:
    """The answer for a job summary: a heading naming the range, each line a list item."""
    items = "".join(f"- {line}\n" for line in lines)
    return f"### compilegate bisect: {commit_words(good)} → {commit_words(bad)}\n\n{items}\n"


def _grew(change: Change) -> bool:
    before, after = change.before, change.after
    return isinstance(before, int) and isinstance(after, int) and after > before


def _unshifted(moved: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """The site changes less those a line shift explains: a site gone and another of the
    same file gained by as many calls (lines added above an unchanged `.item()`)."""
    left = list(moved)
    for site, delta in moved:
        if delta <= 0 or (site, delta) not in left:
            continue
        file = site.rpartition(":")[0]
        twin = next((m for m in left if m[1] == -delta and m[0].rpartition(":")[0] == file), None)
        if twin is not None:
            left.remove((site, delta))
            left.remove(twin)
    return left
