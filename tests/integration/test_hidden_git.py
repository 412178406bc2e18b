"""containers/hidden_git.py: which `.git`s of a tree are covered, and with what (the covers on
the real engine: tests/integration/containers/test_checkout_git_hidden.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

from compilegate.containers.hidden_git import cover_mounts, git_entries


def test_every_dot_git_of_the_tree_is_found_and_none_is_entered(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "init", "-q", str(tree / "vendor" / "dep")], check=True)
    (tree / "wt").mkdir()
    (tree / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    (tree / "links").mkdir()
    (tree / "links" / ".git").symlink_to(tree / ".git")  # a link: what it leads to is covered
    (tree / "outside").symlink_to(tmp_path)  # not followed
    found = sorted(git_entries(tree))
    assert found == [PurePosixPath(p) for p in (".git", "vendor/dep/.git", "wt/.git")]


def test_a_folder_gets_an_empty_folder_and_a_file_an_empty_file(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / ".git").mkdir(parents=True)
    (tree / "wt").mkdir()
    (tree / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    mounts = {m["Target"]: m for m in cover_mounts(tree, "/workspace")}
    assert set(mounts) == {"/workspace/.git", "/workspace/wt/.git"}
    assert all(m["Type"] == "bind" and m["ReadOnly"] for m in mounts.values())
    folder, file = (
        Path(mounts["/workspace/.git"]["Source"]),
        Path(mounts["/workspace/wt/.git"]["Source"]),
    )
    assert folder.is_dir() and not any(folder.iterdir())
    assert file.is_file() and file.stat().st_size == 0
    assert not folder.is_relative_to(tree) and not file.is_relative_to(tree)
