"""The three launchers of children share one declared interface: run.launcher.Launcher."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from compilegate.containers.child_launcher import ContainerLauncher
from compilegate.run.launcher import ChildLauncher, DeadlineLauncher, Launcher

MEMBERS = ("python", "shared_cache_dir", "host_env", "stream", "shares_host_paths")
MEMBERS += ("children_local",)


def launchers() -> list[object]:
    host = ChildLauncher(python="/venv/bin/python", shared_cache_dir=Path("/cache"))
    container = ContainerLauncher(client=None, image="compilegate:torch-2.4.1")
    return [host, container, DeadlineLauncher(host, 60.0), DeadlineLauncher(container, 60.0)]


@pytest.mark.parametrize(
    "launcher", launchers(), ids=["host", "container", "deadline-host", "deadline-container"]
)
def test_each_launcher_is_a_launcher(launcher: object) -> None:
    assert isinstance(launcher, Launcher)
    declared = inspect.signature(Launcher.run).parameters
    theirs = inspect.signature(type(launcher).run).parameters  # type: ignore[attr-defined]
    assert [(p.name, p.kind, p.default) for p in theirs.values()] == [
        (p.name, p.kind, p.default) for p in declared.values()
    ]


def test_the_protocol_declares_what_the_run_side_reads() -> None:
    """Every member, not only run: isinstance checks them all."""
    members = {name for name in dir(Launcher) if not name.startswith("_")}
    assert members == {*MEMBERS, "run"}


def test_a_deadline_launcher_is_its_inner_launcher_but_for_the_limit() -> None:
    host, container, over_host, over_container = launchers()
    for inner, outer in ((host, over_host), (container, over_container)):
        assert {name: getattr(outer, name) for name in MEMBERS} == {
            name: getattr(inner, name) for name in MEMBERS
        }
    assert over_host.shares_host_paths and over_host.children_local  # type: ignore[attr-defined]
    assert not over_container.shares_host_paths  # type: ignore[attr-defined]
    assert not over_container.children_local  # type: ignore[attr-defined]
    assert not hasattr(over_container, "client"), "only the declared members are passed on"
