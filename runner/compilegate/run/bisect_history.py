"""The commits a bisection (`compilegate bisect`) searches: the first-parent history from the
good end to the bad end, through run/host_git.py's hardened git (never a repository git
would discover)."""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..results.bisect import Commit
from .host_git import GitRepository, repository_of, run_git

# A record separator git cannot print inside a subject line (%s is one line).
_SEPARATOR = "\x1f"


def resolve(repo: GitRepository, option: str, ref: str) -> str:
    """The commit `ref` names, or a one-line UsageError naming the option."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{option} {ref!r}: expected a commit, branch or tag")
    try:
        return run_git(
            repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
        )
    except UsageError:
        raise UsageError(
            f"{option} {ref}: not a commit of the repository at {repo.work_tree} (a shallow "
            "clone may not have it: fetch the history, e.g. actions/checkout with "
            "fetch-depth: 0)"
        ) from None


def first_parent_range(repo_root: Path, good: str, bad: str, good_option: str) -> list[Commit]:
    """The good commit, then every first-parent commit after it up to the bad one, oldest
    first. The good commit must be on the bad one's first-parent history."""
    repo = repository_of(repo_root)
    good_sha = resolve(repo, good_option, good)
    bad_sha = resolve(repo, "--bad", bad)
    listed = run_git(
        repo,
        "log",
        "--first-parent",
        "--reverse",
        f"--format=%H{_SEPARATOR}%s",
        "--end-of-options",
        f"{good_sha}..{bad_sha}",
    )
    commits = [_commit(line) for line in listed.splitlines() if line]
    if not commits:
        raise UsageError(
            f"{good_option} {good} and --bad {bad}: no commit after the good one leads to the "
            "bad one (the same commit, or the bad one is older)"
        )
    parent = run_git(repo, "rev-parse", "--verify", "--quiet", f"{commits[0].sha}^1")
    if parent != good_sha:
        raise UsageError(
            f"{good_option} {good}: not on the first-parent history of --bad {bad} (bisect "
            "follows first parents: give a commit of the branch's own line, e.g. a merge "
            "base)"
        )
    subject = run_git(repo, "log", "-1", "--format=%s", good_sha)
    return [Commit(good_sha, subject), *commits]


def _commit(line: str) -> Commit:
    sha, _, subject = line.partition(_SEPARATOR)
    return Commit(sha, subject)
