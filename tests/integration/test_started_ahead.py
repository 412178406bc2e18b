"""The host launcher starts each child's successor beside it (run/launcher.py, `ahead`; the
child's side in child/control.py), on real processes: the next child is the one started
ahead, and it runs in its spec's repository with the Inductor cache it is given; a child of
another environment does not take it; nothing is left once the launcher closes, or once the
parent is gone without closing it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from compilegate.child.protocol import SPARE_ARGUMENT, ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.run.entry_check import resolve_entry
from compilegate.run.launcher import ChildLauncher
from repo_helpers import REPO_ROOT

STEP = """
import os
from pathlib import Path

import torch
from torch import nn


def make_step(device="cpu"):
    Path("cwd-marker").write_text(os.getcwd())  # relative: where the child runs
    Path(os.environ["TORCHINDUCTOR_CACHE_DIR"], "marker").write_text("here")
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    xs = torch.randn(2, 4)
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
            "batch": lambda i: xs, "loss": lambda m, x: m(x).sum()}
"""
CONFIG = """\
version: 1
steps:
  - name: ahead
    entry: step.py:make_step
    device: cpu
    variants: [{backend: eager}]
    warmup: 1
    iterations: 3
    rounds: 2
    threads: 1
    numerics: {enabled: false}
"""


def started_ahead_of(parent: int) -> list[int]:
    """The pids of children started ahead whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rfind(")") + 2 :].split()[1])
        if SPARE_ARGUMENT.encode() in argv and ppid == parent:
            found.append(int(entry.name))
    return found


def eager_spec(repo: Path) -> ChildSpec:
    step = load_config_file(repo / "compilegate.yml", repo_root=repo).steps[0]
    entry = resolve_entry(step.entry, repo, "test")
    return ChildSpec(
        kind="eager",
        repo_root=str(repo),
        entry=entry,
        step=step.name,
        device="cpu",
        settings=step.measurement_settings(),
    )


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "step.py").write_text(STEP)
    (repo / "compilegate.yml").write_text(CONFIG)
    return repo


def test_the_next_child_is_the_one_started_ahead_in_its_repository_and_cache(
    tmp_path: Path,
) -> None:
    repo, cache = make_repo(tmp_path), tmp_path / "variant-cache"
    cache.mkdir()
    launcher = ChildLauncher(stream=io.StringIO())
    try:
        first = launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=180)
        assert first.cause is None and not first.started_ahead
        assert len(started_ahead_of(os.getpid())) == 1  # the probe's successor waits
        second = launcher.run(eager_spec(repo), label="eager", timeout_s=180, cache_dir=cache)
        assert second.cause is None, second.cause
        assert second.started_ahead
        assert second.report is not None and second.report.status == "ok", second.report
        assert (repo / "cwd-marker").read_text() == str(repo)
        assert (cache / "marker").read_text() == "here"  # through the link, into the cache
    finally:
        launcher.close()
    assert started_ahead_of(os.getpid()) == []
    assert cache.is_dir() and (cache / "marker").is_file()  # the child's folder went, not this


def test_a_child_of_another_environment_does_not_take_it(tmp_path: Path) -> None:
    launcher = ChildLauncher(stream=io.StringIO())
    try:
        launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=180)
        waiting = started_ahead_of(os.getpid())
        other = launcher.run(
            ChildSpec(kind="probe"), label="probe", timeout_s=180, env_opt_in=("HF_HOME",)
        )
        assert other.cause is None and not other.started_ahead
        now = started_ahead_of(os.getpid())
        assert len(now) == 1 and now != waiting  # the first one ended; a new one waits
    finally:
        launcher.close()
    assert started_ahead_of(os.getpid()) == []


def test_without_ahead_nothing_starts_beside_a_child() -> None:
    launcher = ChildLauncher(stream=io.StringIO(), ahead=False)
    outcome = launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=180)
    assert outcome.cause is None and not outcome.started_ahead
    assert started_ahead_of(os.getpid()) == []


DRIVER = """
import io, os, sys
from compilegate.child.protocol import ChildSpec
from compilegate.run.launcher import ChildLauncher

launcher = ChildLauncher(stream=io.StringIO())
launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=180)
print(launcher._waiting._child.process.pid, launcher._waiting._child.workdir, flush=True)
os._exit(0)  # no close, no atexit: the parent is simply gone
"""


def test_the_one_started_ahead_ends_when_its_parent_is_gone(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DRIVER)],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    pid_text, workdir = done.stdout.split()
    pid = int(pid_text)
    deadline = time.monotonic() + 120  # it may still be importing torch when the line closes
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        if state == "Z":  # ended; the reaper has not come yet
            break
        time.sleep(0.5)
    alive = Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text()
    assert not alive, f"the child started ahead ({pid}) outlived its parent"
    # Its folder stays (nobody was left to remove it), as a killed child's does.
    subprocess.run(["rm", "-rf", workdir], check=False)


def test_a_child_in_a_relative_repository_starts_its_own(tmp_path: Path, monkeypatch) -> None:
    """The one started ahead moves into a repository by its path; a relative path is the
    parent's, so that child starts fresh, where the parent is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    launcher = ChildLauncher(stream=io.StringIO())
    try:
        launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=180)
        relative = launcher.run(ChildSpec(kind="probe", repo_root="rel"), label="p", timeout_s=180)
        assert relative.cause is None and not relative.started_ahead
    finally:
        launcher.close()
    assert started_ahead_of(os.getpid()) == []
