"""run/host_git.py: which repository git may run against, and the command line and
environment it runs with (the attacks themselves:
tests/integration/test_host_git_planted_repository.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from compilegate.errors import UsageError
from compilegate.run.host_git import (
    GitRepository,
    find_repository,
    git_argv,
    git_env,
    head_commit,
    repository_of,
    run_git,
)
from repo_helpers import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "sub/deeper").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "sub/deeper/f.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    return repo


def test_the_command_line_names_the_repository_and_turns_off_what_runs_commands() -> None:
    repo = GitRepository(Path("/w/.git"), Path("/w"))
    argv = git_argv(repo, ["rev-parse", "HEAD"], Path("/tmp/empty"))
    assert argv[0] == "git" and argv[-2:] == ["rev-parse", "HEAD"]
    assert "--git-dir=/w/.git" in argv and "--work-tree=/w" in argv
    config = [argv[i + 1] for i, part in enumerate(argv) if part == "-c"]
    assert config == [
        "safe.bareRepository=explicit",
        "core.fsmonitor=false",
        "core.hooksPath=/tmp/empty",
    ]
    assert argv.index("--git-dir=/w/.git") < argv.index("rev-parse"), "options before the command"


def test_the_environment_drops_inherited_git_variables() -> None:
    repo = GitRepository(Path("/w/.git"), Path("/w"))
    env = git_env(
        {"PATH": "/bin", "GIT_DIR": "/elsewhere", "GIT_CONFIG_PARAMETERS": "'core.x=1'"}, repo
    )
    assert env["PATH"] == "/bin"
    assert "GIT_DIR" not in env and "GIT_CONFIG_PARAMETERS" not in env
    assert env["GIT_CEILING_DIRECTORIES"] == "/"
    assert env["GIT_NO_REPLACE_OBJECTS"] == "1"


def test_a_subfolder_belongs_to_the_repository_above_it(repo: Path) -> None:
    found = repository_of(repo / "sub/deeper")
    assert found == GitRepository((repo / ".git").resolve(), repo.resolve())
    assert head_commit(repo / "sub/deeper") == git(repo, "rev-parse", "HEAD")
    assert head_commit(repo / "sub/not-there") == git(repo, "rev-parse", "HEAD")


def test_a_bare_repository_in_a_subfolder_is_not_a_repository(repo: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(repo / "sub/bare")], check=True)
    assert repository_of(repo / "sub/bare").work_tree == repo.resolve()


def test_outside_any_repository(tmp_path: Path) -> None:
    assert find_repository(tmp_path) is None
    assert head_commit(tmp_path) is None
    with pytest.raises(UsageError, match="not inside a git repository"):
        repository_of(tmp_path)


def test_a_symlinked_git_folder_is_refused(tmp_path: Path, repo: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / ".git").symlink_to(repo / ".git")
    with pytest.raises(UsageError, match=r"other/\.git: a symlink"):
        repository_of(other)


def test_a_git_file_pointing_into_the_checkout_is_refused(tmp_path: Path) -> None:
    """What a bare repository committed in a subfolder would need to be used as the
    repository: a `.git` file naming it."""
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(work / "planted")], check=True)
    (work / ".git").write_text("gitdir: planted\n")
    with pytest.raises(UsageError, match=r"work/\.git: not a \.git folder"):
        repository_of(work)


def test_a_git_file_elsewhere_without_gits_back_link_is_refused(tmp_path: Path, repo: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    with pytest.raises(UsageError, match=r"not a \.git folder nor git's link"):
        repository_of(work)


def test_a_symlink_inside_the_repository_is_refused(tmp_path: Path, repo: Path) -> None:
    (repo / "linked").symlink_to(tmp_path)
    with pytest.raises(UsageError, match=r"repo/linked: a symlink inside the repository"):
        repository_of(repo / "linked")


def test_a_linked_worktree_is_its_own_repository(tmp_path: Path, repo: Path) -> None:
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "--detach", str(tree), "HEAD")
    found = repository_of(tree / "sub")
    assert found.work_tree == tree.resolve()
    assert found.git_dir.parent == (repo / ".git/worktrees").resolve()
    assert run_git(found, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")


def test_a_failure_is_one_line_naming_the_repository(repo: Path) -> None:
    with pytest.raises(UsageError) as raised:
        run_git(repository_of(repo), "rev-parse", "--verify", "no-such-ref")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("git rev-parse failed in ")
