"""The image backend's children (issue 52, item 1): who they run as, decided through seams,
and how the launcher starts them as that user. The real switch, root to the image's uid 1000
inside the image, is tests/integration/containers/test_image_backend_in_container.py's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

from compilegate.report.shape_words import child_user_line
from compilegate.run import launcher as launcher_module
from compilegate.run.child_failure import NotStarted
from compilegate.run.child_user import ChildUser, decide_child_user
from compilegate.run.launcher import ChildLauncher

ALL_CAPS = 0x000001FFFFFFFFFF
NO_SETUID = ALL_CAPS & ~(1 << 7)


def image_user(name: str) -> tuple[int, int] | None:
    return (1000, 1000) if name == "compilegate" else None


def test_root_with_the_images_user_and_the_capabilities_switches() -> None:
    user = decide_child_user(euid=lambda: 0, lookup=image_user, capabilities=lambda: ALL_CAPS)
    assert user.switched and (user.uid, user.gid) == (1000, 1000)
    assert "run as compilegate (uid 1000), not as this job's root" in child_user_line(user)


@pytest.mark.parametrize(
    ("euid", "lookup", "caps", "reason", "said"),
    [
        (1001, image_user, ALL_CAPS, "not-root", "as this job's user (uid 1001)"),
        (0, lambda name: None, ALL_CAPS, "no-user", "this image has no user compilegate"),
        (0, lambda name: (0, 0), ALL_CAPS, "no-user", "this image has no user compilegate"),
        (0, image_user, NO_SETUID, "no-capability", "may not change user"),
        (0, image_user, None, "no-capability", "may not change user"),
    ],
)
def test_otherwise_the_children_run_as_the_parent_and_a_note_says_why(
    euid: int, lookup: Any, caps: int | None, reason: str, said: str
) -> None:
    user = decide_child_user(euid=lambda: euid, lookup=lookup, capabilities=lambda: caps)
    assert not user.switched and user.uid is None and user.reason == reason
    line = child_user_line(user)
    assert said in line and line.startswith("note: ") and "\n" not in line


class RecordingPopen:
    """Stands in for subprocess.Popen: records how the child would be started."""

    seen: ClassVar[dict[str, Any]] = {}

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        RecordingPopen.seen = kwargs
        raise PermissionError(1, "Operation not permitted")


@pytest.mark.parametrize("switch", [True, False])
def test_the_launcher_starts_the_child_as_that_user_in_folders_it_owns(
    monkeypatch: pytest.MonkeyPatch, switch: bool
) -> None:
    me = os.getuid(), os.getgid()
    user = ChildUser("compilegate", *me, "switched", 0) if switch else None
    monkeypatch.setattr(launcher_module.subprocess, "Popen", RecordingPopen)
    chowned: list[tuple[str, int]] = []
    monkeypatch.setattr(os, "chown", lambda path, uid, gid, **kw: chowned.append((path, uid)))
    launcher = ChildLauncher(child_user=user, ahead=False)
    child = launcher._prepare((), None)
    try:
        launcher._launch_argv(child, ["python"], str(child.workdir))
        assert child.outcome.cause == NotStarted("python", "Operation not permitted")
    finally:
        child.close()
        launcher_module.remove_tree(child.workdir)
    if switch:
        assert RecordingPopen.seen["user"] == me[0] and RecordingPopen.seen["group"] == me[1]
        assert RecordingPopen.seen["extra_groups"] == []
        assert (str(child.workdir), me[0]) in chowned
        assert (str(Path(child.workdir) / "home"), me[0]) in chowned
    else:
        assert "user" not in RecordingPopen.seen and chowned == []
