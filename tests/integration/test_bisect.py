"""`compilegate bisect` on a real history (issue 55): 32 commits of a small step, where
commit 19 adds an `.item()` to the loss and commit 27 a data-dependent branch to the model,
commit 16 does not import. One bisection over the whole range, in real counting children
(Dynamo's eager backend: no Inductor compile), shared by the cases; a quiet range is two
probes more."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from bisect_history import CONFIG, SUBJECTS, build_history, git
from cli_helpers import CliRun, assert_one_line_error, run_cli

pytestmark = pytest.mark.compile  # Dynamo with its eager backend: no Inductor compile

ITEM_AT, BRANCH_AT, BROKEN_AT = 19, 27, 16


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    repo = tmp_path_factory.mktemp("bisect") / "repo"
    return repo, build_history(repo, 32, ITEM_AT, BRANCH_AT, BROKEN_AT)


def bisect(repo: Path, *args: str) -> CliRun:
    return run_cli("bisect", "--config", str(repo / "compilegate.yml"), *args, timeout=600)


@pytest.fixture(scope="module")
def whole_range(history: tuple[Path, list[str]]) -> CliRun:
    repo, shas = history
    return bisect(repo, "--good", shas[0], "--bad", shas[-1])


def test_bisect_names_both_commits_with_their_counts(
    history: tuple[Path, list[str]], whole_range: CliRun
) -> None:
    _, shas = history
    run = whole_range
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    item = f"first at {shas[ITEM_AT - 1][:7]} {SUBJECTS['item']!r}"
    branch = f"first at {shas[BRANCH_AT - 1][:7]} {SUBJECTS['branch']!r}"
    eager_item = [line for line in lines if line.startswith("step tiny, eager:") and item in line]
    assert (
        eager_item
        and "host syncs 0 → 1 (+1 aten::_local_scalar_dense at steps.py:" in (eager_item[0])
    ), lines
    compiled_branch = [line for line in lines if "variant" in line and branch in line]
    assert compiled_branch, lines
    assert "host syncs 1 → 2" in compiled_branch[0]
    assert (
        "graph breaks 0 → 1 (new at steps.py:14: Data-dependent branching" in (compiled_branch[0])
    )
    # Nothing is blamed on another commit.
    assert all(item in line or branch in line for line in lines[:-1]), lines


def test_the_probes_stay_within_the_binary_bound(whole_range: CliRun) -> None:
    tally = whole_range.stdout.splitlines()[-1]
    found = re.match(r"(\d+) probes of 32 commits in [\d.]+ s", tally)
    assert found, tally
    culprits = 2  # every moved count changed at commit 19 or 27
    assert int(found.group(1)) <= (math.ceil(math.log2(32)) + 2) * culprits, tally
    probes = [line for line in whole_range.stderr.splitlines() if line.startswith("probe ")]
    assert len(probes) == int(found.group(1)), whole_range.stderr[-3000:]


def test_a_commit_that_does_not_import_is_skipped_and_said(
    history: tuple[Path, list[str]], whole_range: CliRun
) -> None:
    _, shas = history
    broken = shas[BROKEN_AT - 1][:7]
    said = [line for line in whole_range.stderr.splitlines() if f": {broken} " in line]
    assert said and " skipped (" in said[0], whole_range.stderr[-3000:]
    assert "No module named 'compilegate_no_such_module'" in said[0]
    assert whole_range.stdout.splitlines()[-1].endswith(f"(1 skipped: {broken})")


def test_a_range_where_nothing_moved_is_one_line(history: tuple[Path, list[str]]) -> None:
    """From a stored result (`--against`, a full `compilegate run` at commit 2) to commit 8:
    nothing moved, so the counting pass counts what the full run counted (eager's and the
    variant's step work, compile work, graph breaks, recompiles), one probe."""
    repo, shas = history
    tree = repo.parent / "at-commit-2"
    git(repo, "worktree", "add", "-q", "--detach", str(tree), shas[1])
    stored = repo.parent / "baseline.json"
    one_process = repo.parent / "full-run.yml"  # the counts are the first process's
    one_process.write_text(CONFIG + "    variant_processes: 1\n")
    full = run_cli("run", "--config", str(one_process), "--repo", str(tree),
                   "--out", str(stored))  # fmt: skip
    git(repo, "worktree", "remove", "--force", str(tree))
    assert full.returncode == 0, full.stderr[-3000:]
    summary = repo.parent / "summary.md"
    run = bisect(repo, "--against", str(stored), "--bad", shas[7], "--summary", str(summary))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("\n") == 1, run.stdout
    assert run.stdout.startswith(f"nothing moved between {shas[1][:7]} 'revision 2' and ")
    assert "(1 probe, " in run.stdout
    # The job summary (examples/workflows/bisect.yml) holds the same line, under a heading.
    assert summary.read_text().startswith(f"### compilegate bisect: {shas[1][:7]} 'revision 2'")
    assert f"- {run.stdout}" in summary.read_text()


def test_an_end_off_the_first_parent_line_is_a_usage_error(
    history: tuple[Path, list[str]],
) -> None:
    repo, shas = history
    run = bisect(repo, "--good", shas[5], "--bad", shas[2])
    assert_one_line_error(run, 2, "--good", "no commit after the good one leads to the bad one")
    run = bisect(repo, "--good", "no-such-ref", "--bad", shas[2])
    assert_one_line_error(run, 2, "--good no-such-ref: not a commit of the repository")
