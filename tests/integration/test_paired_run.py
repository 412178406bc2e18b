"""Paired mode's parent side with a stand-in launcher (no child processes): the schedule
alternates A B B A, each side has its own tree, caches and document, and the head is
measured under the base's policy whatever its own config asks."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gate_docs import judge_documents
from test_result import ENV, child_output, timed

from compilegate.child.protocol import ChildReport, ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.errors import BaselineMissing, ConfigError, UsageError
from compilegate.report.child_failure_words import failure_text, said_error
from compilegate.report.note_words import note_words
from compilegate.run.child_budget import BudgetPassed, ChildBudget
from compilegate.run.child_failure import DeadlineRanOut, TimedOut, budget_cause
from compilegate.run.child_process import ChildOutcome
from compilegate.run.launcher import DeadlineLauncher
from compilegate.run.orchestrate import RunOptions
from compilegate.run.paired import base_result_path, paired_configs, run_against
from compilegate.schemas import validation_errors
from repo_helpers import git

BASE_CONFIG = """\
version: 1
steps:
  - name: train
    entry: step.py:make_step
    variants: [{mode: default}]
    iterations: 40
    eager_processes: 2
    variant_processes: 3
    env: [HF_HOME]
    thresholds: {compiled_step_time_growth_pct: 5}
  - name: old
    entry: step.py:make_step
"""
# The pull request asks for less power, another host variable and looser thresholds, and
# adds a step.
HEAD_CONFIG = """\
version: 1
steps:
  - name: train
    entry: step.py:make_step
    variants: [{mode: default}]
    iterations: 10
    rounds: 2
    eager_processes: 1
    variant_processes: 1
    env: [WANDB_PROJECT]
    thresholds: {compiled_step_time_growth_pct: 500}
  - name: added
    entry: step.py:make_step
"""


class StandInLauncher:
    """Answers like ChildLauncher.run and records every child it was asked for."""

    python = "python"  # the other members of a run.launcher.Launcher
    stream = sys.stderr
    shares_host_paths = False
    children_local = True
    shared_cache_dir = None

    def __init__(self) -> None:
        self.host_env = {"PATH": "/bin"}
        self.calls: list[dict[str, Any]] = []

    def run(self, spec, *, label, timeout_s, env_opt_in=(), cache_dir=None, wall_cap_s=None):
        assert ChildSpec.from_json(spec.to_json()) == spec  # the child reads what was sent
        spec = spec.to_json()  # what the child would read
        self.calls.append(
            {"label": label, "spec": spec, "cache_dir": cache_dir, "env": tuple(env_opt_in)}
        )
        if spec["kind"] == "probe":
            environment = {**ENV, "cpu_model": "Stand-in CPU"}
            return ChildOutcome(
                ChildReport.from_json({"status": "ok", "environment": environment}), None
            )
        if spec["kind"] == "eager":
            eager = {
                "warmup_s": [0.1],
                "peak_bytes": None,
                "timed": {"eager": timed(10), "eager_b": timed(10, seed=9)},
            }
            return ChildOutcome(
                ChildReport.from_json({"status": "ok", "device": "cpu", "eager": eager}), None
            )
        return ChildOutcome(
            ChildReport.from_json({"status": "ok", **child_output(10.0, 5.0)}), None
        )


def said(outcome: ChildOutcome) -> str:
    """The outcome's failure in the error's words (report/child_failure_words.py)."""
    return failure_text(outcome.failure) if outcome.failure is not None else ""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    (repo / "compilegate.yml").write_text(BASE_CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "compilegate.yml").write_text(HEAD_CONFIG)
    git(repo, "commit", "-qam", "head")
    return repo


def run(repo: Path, tmp_path: Path) -> tuple[Any, StandInLauncher]:
    launcher = StandInLauncher()
    head = load_config_file(repo / "compilegate.yml")
    options = RunOptions(tmp_path / "out" / "result.json", stream=io.StringIO(), launcher=launcher)
    (tmp_path / "out").mkdir()
    return run_against(head, "HEAD~1", options), launcher


def test_the_sides_alternate_a_b_b_a_each_in_its_own_tree_and_caches(
    repo: Path, tmp_path: Path
) -> None:
    _, launcher = run(repo, tmp_path)
    train = [c for c in launcher.calls if c["label"].startswith("train@")]
    assert [c["label"] for c in train] == [
        "train@base/eager#1",
        "train@head/eager#1",
        "train@head/eager#2",
        "train@base/eager#2",
        "train@base/default",
        "train@head/default",
        "train@head/default#2",
        "train@base/default#2",
        "train@base/default#3",
        "train@head/default#3",
    ]
    trees = {c["label"].split("/")[0]: c["spec"]["repo_root"] for c in train}
    assert trees["train@head"] == str(repo)
    assert trees["train@base"] != str(repo) and not Path(trees["train@base"]).exists()
    caches = {c["label"].split("/")[0]: c["cache_dir"] for c in train if c["cache_dir"]}
    assert caches["train@base"] != caches["train@head"]
    worktrees = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert len(worktrees.splitlines()) == 1, "the base's worktree is removed after the run"


def test_the_head_is_measured_under_the_base_policy(repo: Path, tmp_path: Path) -> None:
    paired, launcher = run(repo, tmp_path)
    head_train = paired.head["steps"][0]
    assert head_train["name"] == "train"
    settings = head_train["settings"]
    assert (settings["iterations"], settings["eager_processes"]) == (40, 2)
    assert settings["variant_processes"] == 3 and settings["env"] == ["HF_HOME"]
    opted_in = {c["env"] for c in launcher.calls if c["label"].startswith("train@head")}
    assert opted_in == {("HF_HOME",)}, "the head's child never sees the variable it asked for"
    assert any("iterations 10 (base: 40)" in note for note in paired.notes)
    report = judge_documents(paired.base, paired.head)
    compiled = report.rows(metric="compiled_step_ms")[0]
    assert compiled.threshold == 5, "thresholds come from the base's document"
    assert any("paired: 3 pairs" in note for note in map(note_words, report.notes))
    assert report.paired and report.failing_refresh_command is None


def test_both_documents_carry_one_pairing_and_are_schema_valid(repo: Path, tmp_path: Path) -> None:
    paired, _ = run(repo, tmp_path)
    assert paired.base_path == base_result_path(paired.head_path)
    base = json.loads(paired.base_path.read_text())
    head = json.loads(paired.head_path.read_text())
    assert base["pairing"]["id"] == head["pairing"]["id"]
    assert (base["pairing"]["role"], head["pairing"]["role"]) == ("base", "head")
    assert validation_errors(base, "result") == [] and validation_errors(head, "result") == []


def test_a_step_only_one_side_declares_is_new_or_removed(repo: Path, tmp_path: Path) -> None:
    paired, launcher = run(repo, tmp_path)
    assert not [c for c in launcher.calls if c["label"].startswith("old@")], "not measured"
    added = [c["label"] for c in launcher.calls if c["label"].startswith("added")]
    assert added[:2] == ["added@head/eager#1", "added@head/default"], "on the head alone"
    verdicts = {(r.step, r.verdict) for r in judge_documents(paired.base, paired.head).verdicts}
    assert ("old", "removed") in verdicts and ("added", "new") in verdicts


def test_a_forged_or_partial_pairing_is_judged_unpaired(repo: Path, tmp_path: Path) -> None:
    paired, _ = run(repo, tmp_path)
    forged = {**paired.head, "pairing": {**paired.head["pairing"], "id": "other"}}
    assert not judge_documents(paired.base, forged).paired
    swapped = {**paired.head, "pairing": {**paired.head["pairing"], "role": "base"}}
    assert not judge_documents(paired.base, swapped).paired


def test_a_ref_that_is_not_a_commit_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    head = load_config_file(repo / "compilegate.yml")
    options = RunOptions(tmp_path / "r.json", stream=io.StringIO(), launcher=StandInLauncher())
    for ref in ("no-such-branch", "--output=/tmp/x"):
        with pytest.raises(UsageError, match="--against"):
            run_against(head, ref, options)


def test_a_base_without_the_config_is_not_judged(tmp_path: Path, repo: Path) -> None:
    """No policy in the base: exit 4 before anything is measured, never every step `new`."""
    git(repo, "rm", "-q", "compilegate.yml")
    git(repo, "commit", "-qm", "no config")
    (repo / "compilegate.yml").write_text(HEAD_CONFIG)
    head = load_config_file(repo / "compilegate.yml")
    worktree = tmp_path / "base-tree"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    with pytest.raises(BaselineMissing, match=r"base commit has no compilegate\.yml") as raised:
        paired_configs(worktree, head)
    assert raised.value.exit_code == 4


def test_the_base_config_is_read_at_the_path_as_named(tmp_path: Path, repo: Path) -> None:
    """The head's config named through a link-free path inside the repository: the base's is
    the file at that same path, whatever else the base tree holds."""
    (repo / "ci").mkdir()
    (repo / "ci/gate.yml").write_text(BASE_CONFIG.replace("iterations: 40", "iterations: 99"))
    (repo / "compilegate.yml").write_text(BASE_CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a second config")
    worktree = tmp_path / "base-tree"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    (repo / "compilegate.yml").write_text(HEAD_CONFIG)
    head = load_config_file(repo / "compilegate.yml", repo_root=repo)
    configs = paired_configs(worktree, head)
    assert configs.base.path == worktree / "compilegate.yml"
    assert configs.head.steps[0].iterations == 40  # compilegate.yml's, not ci/gate.yml's


def test_a_symlinked_config_is_refused_on_either_side(tmp_path: Path, repo: Path) -> None:
    (repo / "ci").mkdir()
    (repo / "ci/gate.yml").write_text(HEAD_CONFIG)
    (repo / "compilegate.yml").unlink()
    (repo / "compilegate.yml").symlink_to("ci/gate.yml")
    with pytest.raises(ConfigError, match=r"compilegate\.yml is a symbolic link"):
        load_config_file(repo / "compilegate.yml", repo_root=repo)
    # The same link in the base's tree: refused too, never followed to another policy.
    head_file = tmp_path / "head" / "compilegate.yml"
    head_file.parent.mkdir()
    head_file.write_text(HEAD_CONFIG)
    (tmp_path / "head" / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    head = load_config_file(head_file, repo_root=tmp_path / "head")
    with pytest.raises(ConfigError, match="symbolic link"):
        paired_configs(repo, head)


def test_a_config_outside_the_repository_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.yml"
    outside.write_text(HEAD_CONFIG)
    head = load_config_file(outside, repo_root=repo)
    options = RunOptions(tmp_path / "r.json", stream=io.StringIO(), launcher=StandInLauncher())
    with pytest.raises(UsageError, match="outside the repository"):
        run_against(head, "HEAD~1", options)
    worktrees = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    ).stdout
    assert len(worktrees.splitlines()) == 1


class Clock:
    """time.monotonic for DeadlineLauncher: each child the stand-in runs takes 10 s."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_matrix_timeout_bounds_the_whole_paired_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`matrix --paired/--against --timeout-s`: one limit over every child of both sides;
    a child's own timeout is cut to what is left, the children due after it are not
    started, and what was measured is kept with each unstarted child named."""
    clock = Clock()
    monkeypatch.setattr("time.monotonic", clock)
    inner = StandInLauncher()
    timeouts: list[float] = []
    answer = inner.run

    def timed_run(spec, *, label, timeout_s, **kw):
        timeouts.append(timeout_s)
        clock.now += 10
        return answer(spec, label=label, timeout_s=timeout_s, **kw)

    inner.run = timed_run  # type: ignore[method-assign]
    launcher = DeadlineLauncher(inner, 45.0)
    head = load_config_file(repo / "compilegate.yml")
    (tmp_path / "out").mkdir()
    options = RunOptions(tmp_path / "out" / "result.json", stream=io.StringIO(), launcher=launcher)
    paired = run_against(head, "HEAD~1", options)
    assert timeouts[:5] == [45.0, 35.0, 25.0, 15.0, 5.0], "each child gets what is left"
    assert len(timeouts) == 5, "no child starts after the limit"
    errors = [
        said_error(step) or ""
        for document in (paired.base, paired.head)
        for step in document["steps"]
    ]
    assert any("--timeout-s 45 s ran out" in e for e in errors), errors


def test_a_child_cut_short_by_the_limit_says_which_limit() -> None:
    class Sleeper:
        python = "python"

        def run(self, spec, *, label, timeout_s, **kw):
            passed = BudgetPassed("wall-only", ChildBudget.of(timeout_s), None, timeout_s)
            return ChildOutcome(None, TimedOut(passed))

    cut = DeadlineLauncher(Sleeper(), 5.0).run(ChildSpec(kind="probe"), label="x", timeout_s=600)
    assert cut.cause == DeadlineRanOut(5.0)
    assert said(cut) == "timed out: --timeout-s 5 s ran out"
    own = DeadlineLauncher(Sleeper(), 5000.0).run({}, label="x", timeout_s=600)
    assert isinstance(own.cause, TimedOut), "the step's own limit is named"
    assert said(own) == "timed out after 600 s (timeout_s, wall clock: CPU time unreadable)"
    assert DeadlineLauncher(Sleeper(), 5.0).python == "python"


def test_under_a_run_limit_the_child_s_wall_cap_is_what_is_left_and_named_so() -> None:
    caps: list[float | None] = []

    class Waiter:
        python = "python"

        def __init__(self, limit: str, cpu_used_s: float, wall_used_s: float) -> None:
            budget = ChildBudget.of(600, wall_cap_s=1000 if limit == "wall" else None)
            self.passed = BudgetPassed(limit, budget, cpu_used_s, wall_used_s)

        def run(self, spec, *, label, timeout_s, wall_cap_s=None, **kw):
            caps.append(wall_cap_s)
            return ChildOutcome(None, budget_cause(self.passed))

    # 1,000 s left of the run: more than the child's 600 CPU-s, less than its 2,400 s cap
    waited = DeadlineLauncher(Waiter("wall", 0, 1000), 1000.0)
    assert said(waited.run({}, label="x", timeout_s=600)) == "timed out: --timeout-s 1000 s ran out"
    assert caps and caps[0] is not None and 999 < caps[0] <= 1000
    worked = DeadlineLauncher(Waiter("cpu", 601, 700), 1000.0)
    own = said(worked.run({}, label="x", timeout_s=600))
    assert own == "timed out: used 601 CPU-s (timeout_s 600) in 700 s", "its own CPU budget"
