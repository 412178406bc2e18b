"""git on the runner host, against the checkout's own repository only.

The checkout is the pull request's data, and git runs commands named in the configuration of
the repository it *discovers*: a pull request can commit a bare repository in a subfolder
(`sub/HEAD`, `sub/config`, `sub/objects/`, `sub/refs/`), and `git -C sub …` then reads that
config, whose `core.fsmonitor` or `remote.<name>.uploadpack` is a shell command (issue 21:
a payload ran on the host and printed the token). So every git call on the host goes through
`run_git`, which never lets git discover anything:

- the repository is the nearest `.git` at or above the given folder, found here, not by git
  (a pull request cannot commit a `.git`: git refuses the path), and given to git as
  `--git-dir`/`--work-tree`; `safe.bareRepository=explicit` and GIT_CEILING_DIRECTORIES as a
  second wall;
- command-line config, which wins over any file's: `core.fsmonitor=false`, hooks from an
  empty folder of our own; GIT_NO_REPLACE_OBJECTS=1; inherited GIT_* variables dropped (they
  would point git at another repository or add config).

An empty `.git` (folder or file) is none: git does not take it for a repository either,
and it is what a container sees of the checkout's (containers/hidden_git.py). A `.git` that
is a symlink, or a file other than git's own link to a linked worktree (which
`run --against` makes, and which links back to it), is refused: UsageError, exit 2, naming
it. A submodule's `.git` file is refused too: point --repo at the superproject.

action.yml's "Find the base" step does the same in shell (its `host_git` function).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

GIT_TIMEOUT_S = 120
HARDENING_CONFIG = ("safe.bareRepository=explicit", "core.fsmonitor=false")


@dataclass(frozen=True)
class GitRepository:
    """Where git may look: the repository's git directory and its work tree."""

    git_dir: Path
    work_tree: Path


def find_repository(start: Path) -> GitRepository | None:
    """The repository holding `start`: the nearest `.git` at or above it; None when there is
    none. A `.git` git did not make itself is refused (module docstring)."""
    folder = Path(os.path.abspath(start))
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_symlink():
            raise UsageError(f"{dot_git}: a symlink; git runs only against a real .git folder")
        if dot_git.exists() and not empty_dot_git(dot_git):
            # Below the top is the checkout's: a link there could lead git anywhere.
            linked = next((p for p in _between(folder, candidate) if p.is_symlink()), None)
            if linked is not None:
                raise UsageError(f"{linked}: a symlink inside the repository {candidate}")
            if dot_git.is_dir():
                return GitRepository(dot_git.resolve(), candidate.resolve())
            return GitRepository(_linked_worktree_git_dir(dot_git), candidate.resolve())
    return None


def empty_dot_git(dot_git: Path) -> bool:
    """A `.git` with nothing in it (an empty folder or file) is no repository: what a
    container sees where compilegate covered the checkout's (containers/hidden_git.py)."""
    try:
        if dot_git.is_dir():
            return not any(dot_git.iterdir())
        return dot_git.is_file() and dot_git.stat().st_size == 0
    except OSError:  # unreadable: not known to be empty; git says what is wrong with it
        return False


def _between(folder: Path, top: Path) -> list[Path]:
    """`folder` and its parents below `top`."""
    return [p for p in (folder, *folder.parents) if top in p.parents]


def repository_of(start: Path) -> GitRepository:
    found = find_repository(start)
    if found is None:
        raise UsageError(f"{start}: not inside a git repository (no .git at or above it)")
    return found


def _linked_worktree_git_dir(dot_git: Path) -> Path:
    """The git directory of a linked worktree (`git worktree add`), from its `.git` file, if
    that file is git's own: `gitdir: D`, D outside the work tree, holding `commondir` and a
    `gitdir` file that names this `.git` back."""
    refused = UsageError(
        f"{dot_git}: not a .git folder nor git's link to a linked worktree; git runs only "
        "against the repository's own .git (for a submodule, use the superproject)"
    )
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise refused from None
    if not dot_git.is_file() or not text.startswith("gitdir: "):
        raise refused
    work_tree = dot_git.parent.resolve()
    git_dir = (dot_git.parent / text.removeprefix("gitdir: ")).resolve()
    try:
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        back = Path((git_dir / "gitdir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        raise refused from None
    inside = [p for p in (git_dir, common) if p == work_tree or work_tree in p.parents]
    if inside or back != dot_git.resolve() or not common.is_dir() or common.is_symlink():
        raise refused
    return git_dir


def git_argv(repo: GitRepository, args: Sequence[str], hooks_dir: Path) -> list[str]:
    """git's command line: the repository named, the hardening config before the command."""
    config = (*HARDENING_CONFIG, f"core.hooksPath={hooks_dir}")
    return [
        "git",
        *(part for item in config for part in ("-c", item)),
        f"--git-dir={repo.git_dir}",
        f"--work-tree={repo.work_tree}",
        *args,
    ]


def git_env(environ: Mapping[str, str], repo: GitRepository) -> dict[str, str]:
    """The host's environment without GIT_* variables, with ours."""
    env = {k: v for k, v in environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CEILING_DIRECTORIES=str(repo.work_tree.parent),
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def run_git(repo: GitRepository, *args: str, timeout_s: float = GIT_TIMEOUT_S) -> str:
    """Run git (module docstring) and return its stdout; a failure is a one-line
    UsageError with git's last line."""
    with tempfile.TemporaryDirectory(prefix="compilegate-no-hooks-") as hooks_dir:
        try:
            done = subprocess.run(
                git_argv(repo, args, Path(hooks_dir)),
                cwd=repo.work_tree,
                env=git_env(os.environ, repo),
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UsageError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        raise UsageError(f"git {args[0]} failed in {repo.work_tree}: {last}")
    return done.stdout.strip()


def head_commit(start: Path) -> str | None:
    """The commit checked out at `start`, for the result's environment; None outside a git
    repository or without a commit."""
    repo = find_repository(start)
    if repo is None:
        return None
    try:
        return run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", timeout_s=10)
    except UsageError:
        return None
