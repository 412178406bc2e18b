"""Every git repository whose config a measured step could read, found without running git.

run/checkout_credentials.py refuses a checkout whose git config holds a credential; a step
reads more than the enclosing repository's `.git/config` (issue 38):

- the enclosing repository (host_git.find_repository: the nearest `.git` at or above the
  folder) and, in its common git directory, every submodule's git directory under
  `modules/` (recursively: a submodule's own `modules/`; a submodule's name may hold `/`)
  and every linked worktree's under `worktrees/` (its `config.worktree`);
- every other checkout in the work tree: a `.git` folder anywhere below it (actions/checkout
  with `path:` into a subfolder), or a `.git` file (a submodule's link into its
  superproject's `modules/`, a linked worktree's), each with its own `modules/` and
  `worktrees/`.

The walk follows no link (a link the pull request commits may lead anywhere, `/` included)
and enters no `.git`, whose `modules/` and `worktrees/` are read as above. It skips nothing
else: not `.venv/`, not `node_modules/`. A folder it cannot list is passed over: the step
runs as the same user, or one with fewer rights, and cannot list it either. It stops after
MAX_WALKED_ENTRIES entries with a UsageError (exit 2): a check that cannot finish does not
pass. A `.git` that is a link is refused, as host_git.find_repository refuses one above.

A pull request cannot commit a `.git` (git refuses the path), so every `.git` found was made
by the workflow or by git: the repositories returned here are git's own, and their configs
are read with host_git.run_git, which names the git directory and lets git discover nothing
(a bare repository the pull request commits in a subfolder has no `.git` and is never read).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import UsageError
from .host_git import GitRepository, empty_dot_git, find_repository

DOT_GIT = ".git"
MAX_WALKED_ENTRIES = 1_000_000


class _Budget:
    """Counts the entries the walk has looked at, and stops it past MAX_WALKED_ENTRIES."""

    def __init__(self, root: Path, limit: int) -> None:
        self.root, self.limit, self.seen = root, limit, 0

    def spend(self, count: int) -> None:
        self.seen += count
        if self.seen > self.limit:
            raise UsageError(
                f"{self.root}: more than {self.limit} files and folders, so the git "
                "repositories in it could not all be checked for a persisted credential: "
                "point --repo (working-directory) at a smaller tree"
            )


def repositories_in_reach(
    folder: Path, *, limit: int = MAX_WALKED_ENTRIES
) -> tuple[Path, list[GitRepository]]:
    """The tree a step is given (the enclosing repository's work tree, or `folder` when it is
    in none) and every repository in it whose config the step could read, the enclosing one
    first; each git directory once."""
    top = find_repository(folder)
    root = top.work_tree if top is not None else Path(os.path.abspath(folder))
    budget = _Budget(root, limit)
    found: dict[Path, GitRepository] = {}

    def add(repo: GitRepository) -> None:
        for each in (repo, *_inner_repositories(repo, budget)):
            found.setdefault(each.git_dir, each)

    if top is not None:
        add(top)
    for repo in _nested_checkouts(root, budget):
        add(repo)
    return root, list(found.values())


def _nested_checkouts(root: Path, budget: _Budget) -> Iterator[GitRepository]:
    """A repository for every `.git` below `root` (not `root`'s own): module docstring."""
    for folder, dirs, files in os.walk(root, followlinks=False):
        budget.spend(len(dirs) + len(files))
        here = Path(folder)
        if DOT_GIT not in dirs and DOT_GIT not in files:
            continue
        if DOT_GIT in dirs:
            dirs.remove(DOT_GIT)
        if here == root:
            continue  # the enclosing repository's own: find_repository's
        dot_git = here / DOT_GIT
        if dot_git.is_symlink():
            raise UsageError(f"{dot_git}: a symlink; git runs only against a real .git folder")
        if empty_dot_git(dot_git):
            continue  # no repository: what a container sees (containers/hidden_git.py)
        if dot_git.is_dir():
            yield GitRepository(dot_git.resolve(), here.resolve())
        else:
            yield GitRepository(_linked_git_dir(dot_git), here.resolve())


def _inner_repositories(repo: GitRepository, budget: _Budget) -> Iterator[GitRepository]:
    """`repo`'s common git directory, when `repo` is a linked worktree's, and the git
    directories under it: each submodule's (`modules/…`, recursively) and each linked
    worktree's (`worktrees/<id>`)."""
    common = _common_dir(repo.git_dir)
    if common != repo.git_dir:  # a linked worktree's repository: its main worktree's config
        yield GitRepository(common, repo.work_tree)
    worktrees = common / "worktrees"
    if worktrees.is_dir() and not worktrees.is_symlink():
        entries = sorted(worktrees.iterdir())
        budget.spend(len(entries))
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink() and _is_git_dir(entry):
                yield GitRepository(entry, repo.work_tree)
    stack = [common / "modules"]
    while stack:
        folder = stack.pop()
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            entries = sorted(folder.iterdir())
        except OSError:  # unreadable: the step cannot read it either
            continue
        budget.spend(len(entries))
        for entry in entries:
            if not entry.is_dir() or entry.is_symlink():
                continue
            if _is_git_dir(entry):  # a submodule's; its own submodules and worktrees too
                module = GitRepository(entry, repo.work_tree)
                yield module
                yield from _inner_repositories(module, budget)
            else:  # a submodule whose name holds `/`: `modules/libs/dep`
                stack.append(entry)


def _is_git_dir(folder: Path) -> bool:
    return (folder / "HEAD").is_file() and any(
        (folder / name).is_file() for name in ("config", "commondir")
    )


def _common_dir(git_dir: Path) -> Path:
    """A linked worktree's git directory names its repository's (`commondir`)."""
    try:
        named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return (git_dir / named).resolve()


def _linked_git_dir(dot_git: Path) -> Path:
    """The git directory a `.git` file names (`gitdir: D`): a submodule's or a linked
    worktree's. Anything else is refused: the step could read what git would."""
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if not text.startswith("gitdir: "):
        raise UsageError(
            f"{dot_git}: neither a .git folder nor git's link to one, so the git config a "
            "step could read there cannot be checked for a persisted credential"
        )
    return (dot_git.parent / text.removeprefix("gitdir: ")).resolve()
