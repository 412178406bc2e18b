"""A folder a measured child wrote into is removed whatever modes the child left in it, and
what cannot be removed is said in one line (issue 29, finding 5).

The bug only shows for a non-root user (root deletes through mode 000), so each case runs
as one (tests/unprivileged.py): before the fix, `rmtree(ignore_errors=True)` left a folder
of mode 000 and its 20 MiB behind in the temp folder, silently."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from compilegate.cleanup import remove_tree
from repo_helpers import RUNNER
from unprivileged import as_unprivileged, runs_as_root, unprivileged_folder

# What a hostile step leaves: 2 MiB in a folder of mode 000, a folder it cannot write,
# a folder it can only read, and a link to a file outside (never chmodded, never removed).
LEAVE_A_MESS = """
import json, os, sys
from pathlib import Path
from compilegate.cleanup import remove_tree
work = Path(sys.argv[1])
tree = work / "compilegate-child"
(tree / "home" / "locked").mkdir(parents=True)
(tree / "home" / "locked" / "blob").write_bytes(b"x" * (2 << 20))
(tree / "home" / "locked" / "deeper").mkdir()
os.chmod(tree / "home" / "locked" / "deeper", 0)
os.chmod(tree / "home" / "locked", 0)
(tree / "readonly").mkdir()
(tree / "readonly" / "file").write_text("x")
os.chmod(tree / "readonly", 0o500)
(tree / "listonly").mkdir()
(tree / "listonly" / "file").write_text("x")
os.chmod(tree / "listonly", 0o400)
outside = work / "outside.txt"
outside.write_text("kept")
os.chmod(outside, 0o400)
(tree / "link").symlink_to(outside)
os.chmod(tree, 0)
left = remove_tree(tree)
print(json.dumps({"left": left, "exists": os.path.lexists(tree),
                  "outside": outside.read_text(), "outside_mode": outside.stat().st_mode & 0o777}))
"""


def test_folders_a_child_made_unreadable_or_unwritable_are_removed_links_untouched() -> None:
    with unprivileged_folder() as work:
        done = as_unprivileged(
            [sys.executable, "-c", LEAVE_A_MESS, str(work)], env={"PYTHONPATH": str(RUNNER)}
        )
        assert done.returncode == 0, done.stderr[-2000:]
        got = json.loads(done.stdout)
        assert got == {"left": None, "exists": False, "outside": "kept", "outside_mode": 0o400}
        assert sorted(os.listdir(work)) == ["outside.txt"]


@pytest.mark.skipif(not runs_as_root(), reason="needs root to plant another user's file")
def test_what_cannot_be_removed_is_said_in_one_line() -> None:
    with unprivileged_folder() as work:
        tree = work / "compilegate-out-2.13.0-x"
        tree.mkdir()
        os.chown(tree, 65534, 65534)
        (tree / "root-owned").mkdir()  # another uid's folder: a rootless engine's subuid
        (tree / "root-owned" / "file").write_text("x")
        code = "import sys\nfrom compilegate.cleanup import remove_tree\n"
        code += "print(remove_tree(sys.argv[1]))"
        done = as_unprivileged(
            [sys.executable, "-c", code, str(tree)], env={"PYTHONPATH": str(RUNNER)}
        )
        assert done.returncode == 0, done.stderr[-2000:]
        line = done.stdout.strip()
        assert line == (f"could not remove {tree} (Permission denied: '{tree}/root-owned/file')"), (
            line
        )


def test_a_link_in_place_of_the_folder_is_removed_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("x")
    (tmp_path / "link").symlink_to(target)
    assert remove_tree(tmp_path / "link") is None
    assert not os.path.lexists(tmp_path / "link") and (target / "kept").exists()
    assert remove_tree(tmp_path / "never-there") is None
