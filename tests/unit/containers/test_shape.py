"""Where am I (issue 52, item 2): the shape found through its seams, whether a backend fits it,
and the one line that says what to use. The real engine's answers (none, and one without the
NVIDIA runtime) are tests/integration/test_where_shape.py's and
tests/integration/containers/test_where_engine_without_gpu.py's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from compilegate.containers.shape import (
    EngineFacts,
    Shape,
    _probe_answer,
    detect_shape,
    fit_backend,
)
from compilegate.report.shape_words import shape_line

# `docker info` of this project's engine (no NVIDIA runtime) and of an H200 host's.
PLAIN_INFO = {"ServerVersion": "20.10.24", "Runtimes": {"runc": {}, "io.containerd.runc.v2": {}}}
NVIDIA_INFO = {"ServerVersion": "27.5.1", "Runtimes": {"runc": {}, "nvidia": {"path": "x"}}}
CDI_INFO = {
    "ServerVersion": "28.1.0",
    "Runtimes": {"runc": {}},
    "DiscoveredDevices": [{"Source": "cdi", "ID": "nvidia.com/gpu=0"}],
}


def no_engine() -> Mapping[str, Any]:
    # What the docker SDK raises when DOCKER_HOST names a socket that is not there.
    raise RuntimeError(
        "Error while fetching server API version: ('Connection aborted.', "
        "FileNotFoundError(2, 'No such file or directory'))"
    )


def facts(
    info: Any = None,
    env: dict[str, str] | None = None,
    *,
    probe: bool | None = None,
    torch: str | None = "2.13.0+cpu",
    devices: tuple[str, ...] = (),
) -> Any:
    return detect_shape(
        env or {},
        engine_info=(lambda: info) if info is not None else no_engine,
        gpu_probe=lambda: probe,
        list_dev=lambda: devices,
        torch_version=lambda: torch,
        probe_gpu=True,
    )


JOB_CONTAINER = {"GITHUB_WORKSPACE": "/__w/trainer/trainer", "KUBERNETES_SERVICE_HOST": "10.0.0.1"}
ARC_DIND = {
    "GITHUB_WORKSPACE": "/home/runner/_work/trainer/trainer",
    "DOCKER_HOST": "unix:///var/run/docker.sock",
    "KUBERNETES_SERVICE_HOST": "10.0.0.1",
}


@pytest.mark.parametrize(
    ("info", "env", "probe", "shape"),
    [
        (NVIDIA_INFO, {}, None, Shape.DOCKER_GPU),
        (CDI_INFO, {}, None, Shape.DOCKER_GPU),
        (PLAIN_INFO, {}, True, Shape.DOCKER_GPU),  # the NVIDIA hook alone: the probe says so
        (PLAIN_INFO, ARC_DIND, False, Shape.DOCKER_NO_GPU),
        (PLAIN_INFO, {}, None, Shape.DOCKER_NO_GPU),  # nothing to probe with: not assumed
        (None, JOB_CONTAINER, None, Shape.JOB_CONTAINER),
        (None, {"GITHUB_WORKSPACE": "/home/runner/_work/a/a"}, None, Shape.NEITHER),
    ],
)
def test_the_shape_is_found_from_its_facts(info: Any, env: dict, probe: Any, shape: Shape) -> None:
    assert facts(info, env, probe=probe).shape is shape


def test_no_engine_is_said_in_words_and_the_address_is_docker_hosts() -> None:
    found = facts(None, {"DOCKER_HOST": "unix:///tmp/missing.sock"})
    assert found.engine is None and found.engine_error == "no such socket"
    assert found.docker_host == "unix:///tmp/missing.sock"
    assert facts(None, {}).docker_host == "unix:///var/run/docker.sock"


def test_the_engine_is_probed_for_a_gpu_only_when_it_registers_none() -> None:
    probed: list[bool] = []

    def probe() -> bool:
        probed.append(True)
        return False

    for info in (NVIDIA_INFO, PLAIN_INFO):
        detect_shape({}, engine_info=lambda i=info: i, gpu_probe=probe, list_dev=list,
                     torch_version=lambda: None, probe_gpu=True)  # fmt: skip
    assert probed == [True]  # PLAIN_INFO's, not NVIDIA_INFO's


@pytest.mark.parametrize(
    ("error", "answer"),
    [
        ('500 Server Error: could not select device driver "" with capabilities: [[gpu]]', False),
        ("nvidia-container-cli: initialization error: nvml error: driver not loaded", False),
        ('exec: "true": executable file not found in $PATH', True),
        ("no space left on device", None),
    ],
)
def test_the_gpu_probe_reads_the_engines_refusal(error: str, answer: bool | None) -> None:
    assert _probe_answer(error) is answer


def test_docker_with_the_gpu_fits() -> None:
    fit = fit_backend(facts(NVIDIA_INFO), "docker", gpus_requested=True, cuda_steps=["big"])
    assert fit.fits and "hands a container the GPU" in shape_line(fit)


def test_a_cuda_step_on_an_engine_without_the_nvidia_runtime_is_refused_in_one_line() -> None:
    fit = fit_backend(
        facts(PLAIN_INFO, probe=False), "docker", gpus_requested=False, cuda_steps=["big"]
    )
    assert not fit.fits and fit.gpu_steps == ("big",)
    line = shape_line(fit)
    assert "\n" not in line and line.startswith("compilegate: the Docker engine at ")
    assert "step big (device: cuda)" in line and "no NVIDIA runtime" in line
    assert "never measures a GPU step on the CPU" in line
    assert "nvidia-ctk runtime configure" in line and "examples/workflows/pool.yml" in line


def test_gpus_asked_of_arcs_dind_sidecar_point_to_the_job_container_shape() -> None:
    fit = fit_backend(
        facts(PLAIN_INFO, ARC_DIND, probe=False), "docker", gpus_requested=True, cuda_steps=[]
    )
    assert not fit.fits
    line = shape_line(fit)
    assert "that --gpus asks for" in line and "a dind sidecar cannot be given one" in line
    assert "compilegate run --backend image" in line and "nvidia-ctk" not in line


def test_a_cpu_run_on_an_engine_without_the_gpu_still_fits() -> None:
    fit = fit_backend(facts(PLAIN_INFO), "docker", gpus_requested=False, cuda_steps=[])
    assert fit.fits and "measures on the CPU" in shape_line(fit)


def test_no_engine_inside_a_job_container_says_use_the_image() -> None:
    fit = fit_backend(facts(None, JOB_CONTAINER), "docker", gpus_requested=True, cuda_steps=[])
    assert not fit.fits and fit.use == "image"
    line = shape_line(fit)
    assert "\n" not in line and "no Docker engine at unix:///var/run/docker.sock" in line
    assert "inside a job container" in line
    assert "compilegate run --backend image" in line and "no write token" in line


def test_no_engine_on_a_bare_host_says_start_one_or_use_the_hosts_torch() -> None:
    fit = fit_backend(facts(None, {}), "docker", gpus_requested=False, cuda_steps=[])
    line = shape_line(fit)
    assert not fit.fits and "start the engine" in line and "torch 2.13.0+cpu" in line
    bare = fit_backend(facts(None, {}, torch=None), "docker", gpus_requested=False, cuda_steps=[])
    assert bare.use is None and "make the compilegate image the job container" in shape_line(bare)


def test_the_image_backend_needs_a_torch_here() -> None:
    here = facts(None, JOB_CONTAINER)
    assert fit_backend(here, "image", gpus_requested=False, cuda_steps=[]).fits
    fit = fit_backend(
        facts(None, JOB_CONTAINER, torch=None), "image", gpus_requested=False, cuda_steps=[]
    )
    assert not fit.fits and "has none" in shape_line(fit)


def test_the_image_backend_inside_a_job_container_says_what_the_job_must_not_hold() -> None:
    fit = fit_backend(facts(None, JOB_CONTAINER), "image", gpus_requested=False, cuda_steps=[])
    line = shape_line(fit)
    assert "inside a job container" in line and "torch 2.13.0+cpu" in line
    assert "no write token and no secret" in line


def test_engine_facts_keep_only_nvidias_cdi_devices() -> None:
    info = {"DiscoveredDevices": [{"ID": "amd.com/gpu=0"}, {"ID": "nvidia.com/gpu=all"}, "x"]}
    engine = EngineFacts.from_info("unix:///s", info)
    assert engine.cdi_gpu_devices == ("nvidia.com/gpu=all",) and engine.registered_gpu
