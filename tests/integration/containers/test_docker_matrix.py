"""The real Docker engine: images built per torch version, compilegate run inside them.

Marker `docker`; see conftest.py for what happens without an engine. The first run builds the
local-torch image (about a minute with the base image cached), later runs reuse it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from docker_helpers import LOCAL_TORCH, write_tiny_config

from compilegate.containers.docker_backend import DockerBackend, container_run_kwargs
from compilegate.containers.images import ImageSpec, ensure_image
from compilegate.containers.matrix import run_matrix
from compilegate.containers.outcome import RunRequest
from repo_helpers import REPO_ROOT

pytestmark = pytest.mark.docker

# What a process inside the container can see and do, printed as one JSON line.
PROBE = r"""
import json, os, socket
found = {"uid": os.getuid(), "env": sorted(os.environ)}
found["interfaces"] = sorted(name for _, name in socket.if_nameindex())
for name, path in (("workspace_write", "/workspace/probe.txt"), ("out_write", "/out/probe.txt")):
    try:
        with open(path, "w") as handle:
            handle.write("x")
        found[name] = "ok"
    except OSError as exc:
        found[name] = exc.strerror
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3).close()  # TEST-NET-1
    found["connect"] = "ok"
except OSError as exc:
    found["connect"] = exc.strerror or type(exc).__name__
print(json.dumps(found))
"""


def test_container_is_isolated(
    docker_client: Any, local_torch_image: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's container settings, as the backend builds them: no token from the host, the
    repository read-only, /out writable, no network, not root."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_must_not_leak")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    os.chmod(out_dir, 0o777)
    request = RunRequest(
        config=REPO_ROOT / "examples" / "compilegate.yml",
        repo=REPO_ROOT,
        out_dir=out_dir,
        env={"COMPILEGATE_ALLOWED": "1"},
    )
    kwargs = container_run_kwargs(local_torch_image.tag, request, user="1000:1000")
    kwargs.update(entrypoint=["python3", "-c", PROBE], command=[])
    container = docker_client.containers.run(**kwargs)
    try:
        status = container.wait(timeout=120)
        output = container.logs().decode()
    finally:
        container.remove(force=True)
    assert status["StatusCode"] == 0, output
    found = json.loads(output.strip().splitlines()[-1])
    assert "GITHUB_TOKEN" not in found["env"]
    assert "COMPILEGATE_ALLOWED" in found["env"]
    # Only the image's own variables besides the allow-listed one.
    assert set(found["env"]) <= {
        "COMPILEGATE_ALLOWED", "PATH", "HOME", "HOSTNAME", "LANG", "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED", "NVIDIA_DRIVER_CAPABILITIES",
    }  # fmt: skip
    assert found["uid"] != 0
    assert found["interfaces"] == ["lo"]
    assert found["workspace_write"] == "Read-only file system"
    assert found["out_write"] == "ok"
    assert found["connect"] != "ok"
    assert not (REPO_ROOT / "probe.txt").exists()


def test_matrix_keeps_good_version_when_another_cannot_install(
    docker_client: Any, local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    """torch 0.0.0 does not exist: its image build fails, and that is its outcome only; the
    local torch runs compilegate for real (tiny MLP, one compiled variant) and its result is
    kept."""
    config = write_tiny_config(tmp_path / "config")
    lines: list[str] = []
    backend = DockerBackend(
        docker_client, source_root=REPO_ROOT, base_image=base_image, log=lines.append
    )
    started = time.perf_counter()
    outcomes = run_matrix(
        [LOCAL_TORCH, "0.0.0"],
        backend,
        config=config,
        repo=REPO_ROOT,
        out_dir=tmp_path / "out",
        env={"COMPILEGATE_DEBUG": "1"},
        timeout_s=600,
        log=lines.append,
    )
    print(f"\nmatrix wall time {time.perf_counter() - started:.1f} s")
    good, bad = outcomes
    assert good.ok, (good.error, "\n".join(good.log_tail))
    print(f"run of torch {LOCAL_TORCH}: {good.run_s:.1f} s, prepare {good.prepare_s:.1f} s")
    assert good.result_path == tmp_path / "out" / f"torch-{LOCAL_TORCH}" / "result.json"
    document = json.loads(good.result_path.read_text())
    (step,) = document["steps"]
    assert step["status"] == "ok", step.get("error")
    assert step["variants"][0]["status"] == "ok", step["variants"][0].get("error")
    assert json.dumps(document).count(LOCAL_TORCH) >= 1  # the torch that measured it
    assert good.exit_code == 0
    assert any(line.startswith(f"[torch {LOCAL_TORCH}]") for line in lines)

    assert not bad.ok
    assert bad.result_path is None
    assert "torch 0.0.0" in bad.error
    assert any("0.0.0" in line for line in bad.log_tail), bad.log_tail
    assert not (tmp_path / "out" / "torch-0.0.0" / "result.json").exists()


def test_wall_clock_limit_stops_the_container(
    docker_client: Any, local_torch_image: Any, base_image: str, tmp_path: Path
) -> None:
    """Past the limit the container is stopped and removed; the version is an error."""
    config = write_tiny_config(tmp_path / "config")
    backend = DockerBackend(
        docker_client, source_root=REPO_ROOT, base_image=base_image, log=lambda _: None
    )
    before = {c.id for c in docker_client.containers.list(all=True)}
    (outcome,) = run_matrix(
        [LOCAL_TORCH], backend, config=config, repo=REPO_ROOT, out_dir=tmp_path / "out",
        timeout_s=3, log=lambda _: None,
    )  # fmt: skip
    assert not outcome.ok
    assert outcome.exit_code is None
    assert "timed out after 3 s" in outcome.error
    assert outcome.run_s < 15, "the stop signal reached compilegate (no 10 s grace wait)"
    assert {c.id for c in docker_client.containers.list(all=True)} <= before


def test_image_is_reused_until_an_input_changes(
    docker_client: Any, local_torch_image: Any, base_image: str
) -> None:
    spec = ImageSpec.from_host(LOCAL_TORCH, source_root=REPO_ROOT, base_image=base_image)
    again = ensure_image(docker_client, spec, log=lambda _: None)
    assert again.reused and again.tag == local_torch_image.tag
    image = docker_client.images.get(again.tag)
    assert image.labels["compilegate.torch-version"] == LOCAL_TORCH
    assert image.attrs["Config"]["User"] not in ("", "0", "root")
