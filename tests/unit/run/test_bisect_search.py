"""The bisection's search and its words, offline: a fake probe over a made-up history (the
real one, with real counting children, is tests/integration/test_bisect.py)."""

from __future__ import annotations

import math

from compilegate.report.bisect_words import answer_lines, nothing_moved_words, tally_words
from compilegate.results.bisect import (
    EAGER,
    Commit,
    CommitCounts,
    CountKey,
    Skipped,
    SubjectCounts,
    moved_keys,
)
from compilegate.results.model import (
    BreakSite,
    GraphBreaks,
    StepWork,
    StepWorkCounts,
)
from compilegate.run.bisect_search import Search

COMMITS = [Commit(f"{n:07x}" + "0" * 33, f"revision {n}") for n in range(1, 101)]


def counts(syncs: int, breaks: int = 0, sites: tuple[tuple[str, int], ...] = ()) -> CommitCounts:
    work = StepWork(
        counts=StepWorkCounts(
            aten_ops=10 + syncs,
            compiled_region_calls=0,
            kernels=None,
            cuda_graph_replays=None,
            host_syncs=syncs,
            flops=100,
            allocations=5,
            allocated_bytes=64,
        ),
        absent={"kernels": "CPU", "cuda_graph_replays": "CPU"},
        top={"host_syncs": (("aten::_local_scalar_dense", syncs),)} if syncs else {},
        batch_index=1,
        sync_sites=sites,
    )
    graph_breaks = GraphBreaks(
        count=breaks,
        sites=tuple(BreakSite(file="model.py", line=27, reason="data-dependent", count=1)
                    for _ in range(breaks)),
    )  # fmt: skip
    return CommitCounts(
        {"gate": {EAGER: SubjectCounts(step_work=work),
                  "default": SubjectCounts(step_work=work, graph_breaks=graph_breaks)}}
    )  # fmt: skip


def history(item_at: int, branch_at: int, broken: frozenset[int] = frozenset()):
    """The counts of commit n (1-based): a host sync from `item_at`, a graph break and
    another host sync from `branch_at`; `broken` commits do not import."""
    probed: list[int] = []

    def probe(commit: Commit) -> CommitCounts | Skipped:
        n = int(commit.sha[:7], 16)
        probed.append(n)
        if n in broken:
            return Skipped("importing steps.py raised ModuleNotFoundError")
        syncs = (n >= item_at) + (n >= branch_at)
        sites = (("model.py:73", 1),) if n >= item_at else ()
        return counts(syncs, breaks=int(n >= branch_at), sites=sites)

    return probe, probed


def test_each_change_is_found_within_the_binary_bound_probing_each_commit_once() -> None:
    commits = COMMITS[:32]
    probe, probed = history(item_at=19, branch_at=27)
    search = Search(commits, probe)
    good, bad = search.at(0), search.at(31)
    assert isinstance(good, CommitCounts) and isinstance(bad, CommitCounts)
    keys = moved_keys(good, bad)
    syncs = CountKey("gate", EAGER, "host_syncs")
    breaks = CountKey("gate", "default", "graph_breaks")
    assert syncs in keys and breaks in keys
    found = {key: search.changes(key) for key in keys}
    assert [(c.first.subject, c.before, c.after) for c in found[syncs]] == [
        ("revision 19", 0, 1),
        ("revision 27", 1, 2),
    ]
    assert [(c.first.subject, c.last_before.subject) for c in found[breaks]] == [
        ("revision 27", "revision 26")
    ]
    assert len(probed) == len(set(probed))  # every commit at most once, whatever asked
    culprits = {c.first.sha for changes in found.values() for c in changes}
    assert len(probed) <= (math.ceil(math.log2(32)) + 2) * len(culprits)


def test_a_commit_that_fails_is_skipped_and_its_neighbour_probed() -> None:
    commits = COMMITS[:32]
    probe, probed = history(item_at=19, branch_at=27, broken=frozenset({16}))
    search = Search(commits, probe)
    search.at(0), search.at(31)
    (first, _) = search.changes(CountKey("gate", EAGER, "host_syncs"))
    assert first.first.subject == "revision 19" and first.pinned
    assert 16 in probed  # the middle, tried first
    assert [r.commit.subject for r in search.records if r.skipped] == ["revision 16"]
    assert "1 skipped: 0000010" in tally_words(search.records, 32)


def test_a_change_among_skipped_commits_names_the_candidates() -> None:
    commits = COMMITS[:8]
    probe, _ = history(item_at=5, branch_at=99, broken=frozenset({4, 5}))
    search = Search(commits, probe)
    search.at(0), search.at(7)
    (change,) = search.changes(CountKey("gate", EAGER, "host_syncs"))
    assert not change.pinned
    assert [c.subject for c in change.candidates] == ["revision 4", "revision 5"]
    assert change.first.subject == "revision 6"
    (line,) = answer_lines([change])
    assert line.endswith(
        "first at one of 0000004 'revision 4', 0000005 'revision 5', 0000006 'revision 6' "
        "(the others were skipped)"
    ), line


def test_the_answer_names_the_change_its_site_and_the_commit() -> None:
    """The issue's shape: `host syncs 28 → 30 (+2 aten::_local_scalar_dense at
    model.py:73) first at 1a2b3c4 'add nan check'`."""
    commits = [Commit("9" * 40, "revision 9"), Commit("1a2b3c4" + "0" * 33, "add nan check")]
    before = counts(28, sites=(("model.py:12", 28),))
    after = counts(30, breaks=1, sites=(("model.py:12", 28), ("model.py:73", 2)))
    outcomes = {commits[0].sha: before, commits[1].sha: after}
    search = Search(commits, lambda commit: outcomes[commit.sha])
    search.at(0), search.at(1)
    changes = [c for key in moved_keys(before, after) for c in search.changes(key)]
    lines = answer_lines(changes)
    assert lines[0] == (
        "step gate, eager: host syncs 28 → 30 (+2 aten::_local_scalar_dense at model.py:73), "
        "ATen ops 38 → 40 first at 1a2b3c4 'add nan check'"
    ), lines
    assert "graph breaks 0 → 1 (new at model.py:27: data-dependent)" in lines[1], lines


def test_lines_shifted_above_an_unchanged_item_are_no_new_site() -> None:
    """Two lines added above the loss's `.item()` move its site 24 → 26: the change's own
    sync (a `bool()` of a tensor, which records no site) is named without that site."""
    commits = [Commit("a" * 40, "revision 26"), Commit("b" * 40, "branch")]
    before = counts(1, sites=(("steps.py:24", 1),))
    after = counts(2, sites=(("steps.py:26", 1),))
    outcomes = {commits[0].sha: before, commits[1].sha: after}
    search = Search(commits, lambda commit: outcomes[commit.sha])
    search.at(0), search.at(1)
    (change,) = search.changes(CountKey("gate", EAGER, "host_syncs"))
    (line,) = answer_lines([change])
    assert "host syncs 1 → 2 (+1 aten::_local_scalar_dense)" in line, line
    assert "steps.py:26" not in line


def test_nothing_moved_is_one_line() -> None:
    commits = COMMITS[:4]
    search = Search(commits, lambda commit: counts(1))
    good, bad = search.at(0), search.at(3)
    assert isinstance(good, CommitCounts) and isinstance(bad, CommitCounts)
    assert moved_keys(good, bad) == []
    line = nothing_moved_words(commits[0], commits[3], (), search.records)
    assert "\n" not in line
    assert line.startswith("nothing moved between 0000001 'revision 1' and 0000004 'revision 4'")


def test_a_stored_result_gives_the_counts_a_probe_would() -> None:
    """`bisect --against BASELINE`: the good end's counts from the document, through the
    same typed parts (a failed variant has none)."""
    from gate_docs import result, site, step, variant

    from compilegate.results.bisect import counts_of_document
    from compilegate.results.model import parse

    work = {
        "counts": {**dict.fromkeys(StepWorkCounts.REQUIRED, 3), "kernels": None},
        "absent": {"kernels": "no CUDA"},
        "top": {"host_syncs": [["aten::_local_scalar_dense", 3]]},
        "batch_index": 5,
        "sync_sites": [["model.py:73", 3]],
    }
    measured = variant(sites=[site("model.py", 27, "data-dependent")], recompiles=2,
                       step_work=work)  # fmt: skip
    failed = variant("reduce-overhead", status="error", error="boom")
    doc = step(variants=[measured, failed])
    doc["eager"]["step_work"] = work
    counts = counts_of_document(parse(result(doc), "baseline.json", "baseline"))
    assert counts.value(CountKey("train", EAGER, "host_syncs")) == 3
    assert counts.value(CountKey("train", "default", "graph_breaks")) == 1
    assert counts.value(CountKey("train", "default", "recompiles")) == 2
    assert counts.value(CountKey("train", "default", "numerics")) == "pass"
    assert counts.value(CountKey("train", "default", "kernels")) is None  # absent: not followed
    assert counts.subject(CountKey("train", "reduce-overhead", "graphs")) is None
