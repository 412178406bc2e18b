"""Each child of a paired docker run in its own container: what it may see and do, how its
result is read (as hostile input), its time limit — with a fake engine."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from compilegate.child.protocol import ChildReport, ChildSpec, Phase, progress_line
from compilegate.containers.child_launcher import ContainerLauncher
from compilegate.report.child_failure_words import failure_text
from compilegate.run.child_failure import BadResult, Exited, TimedOut


class FakeContainer:
    def __init__(self, client: FakeClient, kwargs: dict[str, Any]) -> None:
        self.client, self.kwargs = client, kwargs
        self.removed = self.killed = False

    def logs(self, stream: bool, follow: bool):
        harness = next(h for h, m in self.kwargs["volumes"].items() if m["bind"] == "/harness")
        token = json.loads((Path(harness) / "spec.json").read_text())["progress_token"]
        progress = progress_line(token, Phase.TIMED, "x", 1.0, "measuring")
        yield f"{progress}\nplain line\n".encode()

    def wait(self, timeout: float) -> dict[str, int]:
        if self.client.hang:
            raise TimeoutError("read timed out")
        harness = next(h for h, m in self.kwargs["volumes"].items() if m["bind"] == "/harness")
        self.client.write(Path(harness) / "out")
        return {"StatusCode": self.client.exit_code}

    def stats(self, stream: bool, one_shot: bool = False) -> dict[str, Any]:
        self.client.cpu_s += self.client.cpu_s_per_read
        return {"cpu_stats": {"cpu_usage": {"total_usage": int(self.client.cpu_s * 1e9)}}}

    def kill(self) -> None:
        self.killed = True

    def remove(self, force: bool) -> None:
        self.removed = True


class FakeClient:
    def __init__(self, write=None, exit_code: int = 0, hang: bool = False) -> None:
        self.containers = self
        self.started: list[FakeContainer] = []
        self.write = write or (lambda out: (out / "result.json").write_text('{"status": "ok"}'))
        self.exit_code, self.hang = exit_code, hang
        self.cpu_s, self.cpu_s_per_read = 0.0, 20.0  # the container's CPU time, as stats say

    def run(self, **kwargs: Any) -> FakeContainer:
        container = FakeContainer(self, kwargs)
        self.started.append(container)
        return container


def said(outcome: Any) -> str:
    """The outcome's failure in the error's words (report/child_failure_words.py)."""
    return failure_text(outcome.failure) if outcome.failure is not None else ""


def launch(client: FakeClient, tmp_path: Path, **kwargs: Any):
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    host_env = {"PATH": "/usr/bin", "HOME": "/root", "GITHUB_TOKEN": "ghp_x", "LANG": "C.UTF-8"}
    launcher = ContainerLauncher(client, "compilegate:torch-2.13.0", host_env=host_env)
    (repo / "step.py").write_text("")
    entry = {"spec": "step.py:f", "file": str(repo / "step.py"), "function": "f", "line": 1}
    raw = {"kind": "eager", "repo_root": str(repo), "step": "s", "entry": entry}
    spec = ChildSpec.from_json({**raw, "device": "cpu", "settings": {"seed": 0}})
    return launcher.run(spec, label="s@head/eager#1", timeout_s=30, **kwargs)


def test_the_child_sees_its_tree_read_only_and_nothing_of_the_host(tmp_path: Path) -> None:
    client = FakeClient()
    cache = tmp_path / "variant-cache"
    cache.mkdir()
    outcome = launch(client, tmp_path, cache_dir=cache)
    assert outcome.cause is None and outcome.report == ChildReport("ok")
    assert (outcome.phase, outcome.doing) == (Phase.TIMED, "measuring")
    assert outcome.output_tail == ["plain line"]
    (container,) = client.started
    kwargs = container.kwargs
    binds = {m["bind"]: (path, m["mode"]) for path, m in kwargs["volumes"].items()}
    assert binds["/workspace"] == (str((tmp_path / "repo").resolve()), "ro")
    assert binds["/inductor-cache"] == (str(cache), "rw"), "the side's own variant cache"
    assert set(binds) == {"/workspace", "/harness", "/inductor-cache"}
    assert kwargs["network_mode"] == "none" and kwargs["cap_drop"] == ["ALL"]
    assert kwargs["security_opt"] == ["no-new-privileges"] and kwargs["init"] is True
    assert not kwargs["user"].startswith("0"), "never root"
    env = kwargs["environment"]
    assert "GITHUB_TOKEN" not in env and env["HOME"] == "/harness/home"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/inductor-cache"
    assert "/root" not in json.dumps(env), "no host path"
    assert container.removed
    harness = next(p for p, m in kwargs["volumes"].items() if m["bind"] == "/harness")
    assert not Path(harness).exists(), "the harness folder goes with the child"


def test_the_trees_dot_git_is_covered_by_an_empty_one(tmp_path: Path) -> None:
    """A paired run's base tree is a linked worktree: its `.git` is a file (hidden_git.py)."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / ".git").write_text("gitdir: /host/repo/.git/worktrees/tree\n")
    client = FakeClient()
    launch(client, tmp_path)
    (cover,) = client.started[0].kwargs["mounts"]
    assert cover["Target"] == "/workspace/.git" and cover["ReadOnly"]
    assert Path(cover["Source"]).read_bytes() == b""


def test_the_spec_names_the_tree_as_the_container_sees_it(tmp_path: Path) -> None:
    seen = {}

    def write(out: Path) -> None:
        seen.update(json.loads((out.parent / "spec.json").read_text()))
        (out / "result.json").write_text("{}")

    launch(FakeClient(write=write), tmp_path)
    assert seen["repo_root"] == "/workspace" and seen["entry"]["file"] == "/workspace/step.py"
    assert seen["out"] == "/harness/out/result.json"


def test_a_result_that_is_a_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text('{"token": "ghp_secret"}')
    client = FakeClient(write=lambda out: os.symlink(secret, out / "result.json"))
    outcome = launch(client, tmp_path)
    assert outcome.report is None and isinstance(outcome.cause, BadResult)
    assert "not a regular file" in said(outcome)


def test_a_child_past_its_cpu_seconds_is_killed_and_removed(tmp_path: Path) -> None:
    client = FakeClient(hang=True)
    outcome = launch(client, tmp_path)
    assert isinstance(outcome.cause, TimedOut) and outcome.cause.passed.cpu_used_s == 40
    assert outcome.phase is Phase.TIMED
    assert said(outcome).startswith("timed out: used 40 CPU-s (timeout_s 30) in ")
    assert said(outcome).endswith(" while measuring")
    assert client.started[0].killed and client.started[0].removed


def test_a_failing_child_names_its_exit_code_and_last_line(tmp_path: Path) -> None:
    outcome = launch(FakeClient(exit_code=3), tmp_path)
    assert outcome.cause == Exited(3, "plain line")
    assert said(outcome) == "child process exited with code 3: plain line while measuring"


def test_the_folders_go_with_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    launch(FakeClient(), tmp_path)
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize(
    ("content", "limit"),
    [
        (b"[" * 200_000, "nested deeper than 32 levels (max_depth)"),
        (b"[" + b"{}," * 300_000 + b"{}]", "a list of more than 250000 items"),
    ],
    ids=["nested", "wide"],
)
def test_a_forged_result_is_refused_naming_the_limit(
    tmp_path: Path, content: bytes, limit: str
) -> None:
    """Issue 38: each child of a paired run hands the host a file the host used to parse
    whole (a RecursionError, or ~50 bytes of memory a byte of `[{},{},…]`)."""
    outcome = launch(
        FakeClient(write=lambda out: (out / "result.json").write_bytes(content)), tmp_path
    )
    assert outcome.report is None
    assert f"child process wrote a result the parent refuses: {limit}" in said(outcome)


def test_a_result_over_the_document_size_is_not_even_copied(tmp_path: Path) -> None:
    def write(out: Path) -> None:
        with open(out / "result.json", "wb") as handle:
            handle.truncate((16 << 20) + 1)

    outcome = launch(FakeClient(write=write), tmp_path)
    assert outcome.report is None
    assert "result.json refused: larger than 16777216 bytes" in said(outcome)


def test_a_distributed_steps_container_gets_shared_memory_for_its_ranks(tmp_path: Path) -> None:
    """NCCL's ranks in one container talk through /dev/shm (64 MiB by default)."""
    client = FakeClient()
    launch(client, tmp_path)
    assert "shm_size" not in client.started[0].kwargs
    repo = tmp_path / "repo"
    entry = {"spec": "step.py:f", "file": str(repo / "step.py"), "function": "f", "line": 1}
    settings = {"seed": 0, "distributed": {"wrapper": "ddp", "world_size": 2}}
    raw = {"kind": "eager", "repo_root": str(repo), "step": "s", "entry": entry}
    spec = ChildSpec.from_json({**raw, "device": "cpu", "settings": settings})
    launcher = ContainerLauncher(client, "compilegate:torch-2.13.0", host_env={})
    launcher.run(spec, label="s/eager#1", timeout_s=30)
    assert client.started[1].kwargs["shm_size"] == "1g"
    assert client.started[1].kwargs["network_mode"] == "none"
