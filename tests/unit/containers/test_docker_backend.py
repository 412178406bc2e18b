"""What a container may see and do, decided without an engine (a fake client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compilegate.containers.docker_backend import (
    container_run_kwargs,
    parse_gpus,
    run_container,
)
from compilegate.containers.outcome import RunRequest
from compilegate.errors import UsageError


def test_gpus_all_count_and_devices() -> None:
    assert parse_gpus(None) == [] and parse_gpus("") == []
    (every,) = parse_gpus("all")
    assert every["Count"] == -1 and every["Capabilities"] == [["gpu"]]
    (two,) = parse_gpus("2")
    assert two["Count"] == 2 and not two["DeviceIDs"]
    (chosen,) = parse_gpus('"device=0,1"')
    assert chosen["DeviceIDs"] == ["0", "1"] and chosen["Capabilities"] == [["gpu"]]
    (uuid,) = parse_gpus("device=GPU-3f2a")
    assert uuid["DeviceIDs"] == ["GPU-3f2a"]


@pytest.mark.parametrize("spec", ["0", "-1", "some", "device=", "device=0,,1", "device=0;rm"])
def test_bad_gpus_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError, match="--gpus"):
        parse_gpus(spec)


def make_request(tmp_path: Path, config: Path | None = None, **changes: Any) -> RunRequest:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / "compilegate.yml").write_text("version: 1\n")
    return RunRequest(
        config=config or repo / "compilegate.yml",
        repo=repo,
        out_dir=tmp_path / "out",
        **changes,
    )


def test_run_kwargs_isolate_the_container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    request = make_request(tmp_path, env={"CUDA_VISIBLE_DEVICES": "0"}, steps=("a",))
    kwargs = container_run_kwargs(
        "img:1", request, user="1000:1000", device_requests=parse_gpus("all")
    )
    repo, out = str((tmp_path / "repo").resolve()), str((tmp_path / "out").resolve())
    assert kwargs["volumes"] == {
        repo: {"bind": "/workspace", "mode": "ro"},
        out: {"bind": "/out", "mode": "rw"},
    }
    assert kwargs["network_mode"] == "none"
    assert kwargs["environment"] == {"CUDA_VISIBLE_DEVICES": "0"}
    assert kwargs["user"] == "1000:1000"
    assert kwargs["cap_drop"] == ["ALL"]
    assert kwargs["init"] is True
    assert "no-new-privileges" in kwargs["security_opt"]
    assert kwargs["device_requests"][0]["Count"] == -1
    assert not kwargs.get("privileged")
    assert kwargs["command"] == [
        "run", "--config", "/workspace/compilegate.yml", "--repo", "/workspace",
        "--out", "/out/result.json", "--step", "a",
    ]  # fmt: skip
    assert "ghp_secret" not in repr(kwargs)
    assert kwargs["mounts"] == [], "no .git in this repository: nothing to cover"


def test_the_repositorys_dot_git_is_covered(tmp_path: Path) -> None:
    request = make_request(tmp_path)
    (request.repo / ".git").mkdir()
    kwargs = container_run_kwargs("img:1", request, user="1000:1000")
    (cover,) = kwargs["mounts"]
    assert cover["Target"] == "/workspace/.git" and cover["ReadOnly"]
    assert not any(Path(cover["Source"]).iterdir())


def test_a_config_outside_the_repository_is_mounted_read_only(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "cg.yml"
    outside.parent.mkdir()
    outside.write_text("version: 1\n")
    kwargs = container_run_kwargs("img:1", make_request(tmp_path, outside), user="1000:1000")
    assert kwargs["volumes"][str(outside.resolve())] == {
        "bind": "/etc/compilegate/compilegate.yml",
        "mode": "ro",
    }
    assert kwargs["command"][1:3] == ["--config", "/etc/compilegate/compilegate.yml"]
    assert "device_requests" not in kwargs


class FakeContainer:
    def __init__(self, exit_code: int | None, output: bytes) -> None:
        self.exit_code, self.output = exit_code, output
        self.stopped = self.killed = self.removed = False

    def logs(self, stream: bool = False, follow: bool = False):
        return iter([self.output[:5], self.output[5:]])

    def wait(self, timeout: float) -> dict[str, int]:
        if self.exit_code is None:
            raise TimeoutError("read timed out")  # what requests raises, in spirit
        return {"StatusCode": self.exit_code}

    def stop(self, timeout: float) -> None:
        self.stopped = True

    def kill(self) -> None:
        self.killed = True

    def remove(self, force: bool) -> None:
        self.removed = True


class FakeContainers:
    def __init__(self, container: FakeContainer) -> None:
        self.container, self.kwargs = container, None

    def run(self, **kwargs: Any) -> FakeContainer:
        self.kwargs = kwargs
        return self.container


class FakeClient:
    def __init__(self, container: FakeContainer) -> None:
        self.containers = FakeContainers(container)


def test_run_streams_prefixed_lines_and_removes_the_container(tmp_path: Path) -> None:
    container = FakeContainer(3, b"measuring\nstep failed: boom\n")
    client = FakeClient(container)
    lines: list[str] = []
    completed = run_container(
        client, "img:1", make_request(tmp_path), prefix="[torch 2.13.0]", log=lines.append,
        user="1000:1000",
    )  # fmt: skip
    assert lines == ["[torch 2.13.0] measuring", "[torch 2.13.0] step failed: boom"]
    assert completed.exit_code == 3
    assert completed.error == "compilegate exited 3: step failed: boom"
    assert container.removed and not container.stopped
    assert client.containers.kwargs["network_mode"] == "none"


def test_run_past_the_limit_is_stopped_and_removed(tmp_path: Path) -> None:
    container = FakeContainer(None, b"compiling\n")
    completed = run_container(
        FakeClient(container), "img:1", make_request(tmp_path, timeout_s=5),
        log=lambda _: None, user="1000:1000",
    )  # fmt: skip
    assert completed.exit_code is None
    assert completed.error == "timed out after 5 s: container stopped"
    assert container.stopped and container.removed
