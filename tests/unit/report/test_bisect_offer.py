"""The comment offers `compilegate bisect` when a count regresses on a pull request of more
than one commit (issue 55): the one command, in the details, never run for the user."""

from __future__ import annotations

import json
from pathlib import Path

from gate_docs import result, site, step, variant

from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.report.comment import render_comment
from compilegate.report.links import LinkContext
from compilegate.results.model import parse

BASE = "b" * 40
HEAD = "c" * 40
BREAK = site("model.py", 27, "data-dependent branching")


def comment(tmp_path: Path, current: dict, links: LinkContext) -> str:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(current), encoding="utf-8")
    baseline = parse(result(step()), "baseline.json", "baseline")
    run_set = judge_run_set([ResultSource(path, "torch")], baseline, "baseline.json")
    return render_comment(run_set, links=links)


def links(commits: int | None) -> LinkContext:
    return LinkContext(
        "https://git.example", "acme/trainer", HEAD, pr_commits=commits, base_sha=BASE
    )


def test_a_new_graph_break_on_a_pull_request_of_three_commits_offers_the_command(
    tmp_path: Path,
) -> None:
    text = comment(tmp_path, result(step(variants=[variant(sites=[BREAK])])), links(3))
    command = (
        f'compilegate bisect --good "$(git merge-base {BASE} {HEAD})" --config '
        f"compilegate.yml --bad {HEAD} --step train --count graph_breaks"
    )
    assert command in text, text
    assert "find the commit that moved a count" in text
    assert "this pull request's 3 commits" in text


def test_one_commit_or_no_moved_count_offers_nothing(tmp_path: Path) -> None:
    moved = result(step(variants=[variant(sites=[BREAK])]))
    assert "compilegate bisect" not in comment(tmp_path, moved, links(1))
    assert "compilegate bisect" not in comment(tmp_path, moved, links(None))
    slower = result(step(variants=[variant(speedup=0.6, step_ms=16.0)]))
    assert "compilegate bisect" not in comment(tmp_path, slower, links(5))


def test_the_pull_request_s_commits_come_from_the_event(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    pull = {"commits": 4, "base": {"sha": BASE}, "head": {"sha": HEAD}}
    event.write_text(json.dumps({"pull_request": pull}), encoding="utf-8")
    found = LinkContext.from_environ({"GITHUB_EVENT_PATH": str(event)})
    assert (found.pr_commits, found.base_sha, found.head_sha) == (4, BASE, HEAD)
    event.write_text(json.dumps({"pull_request": {"commits": "4; rm -rf /"}}), encoding="utf-8")
    assert LinkContext.from_environ({"GITHUB_EVENT_PATH": str(event)}).pr_commits is None
