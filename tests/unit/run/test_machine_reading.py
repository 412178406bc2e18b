"""The hardware class as compilegate reads it, never as the measuring interpreter reports it
(issue 52): a pull request's packages run in the probe and could name another CPU model or GPU,
which picks another class's baseline, one that judges none of the speed, compile seconds or
memory (gate/hardware_reach.py). The class's fields are compilegate's own reading; the probe's
other values are overruled and the fields named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compilegate.child.environment import cpu_model as probes_cpu_model
from compilegate.results.machine import MachineFingerprint
from compilegate.results.model import Environment, part_of
from compilegate.run.machine_reading import (
    MachineReading,
    cpu_model,
    cuda_visible,
    read_machine,
)

CPUINFO = {
    "x86": "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n",
    "arm": "processor\t: 0\nBogoMIPS\t: 50.00\n\nModel\t\t: Raspberry Pi 4\n",
    "none": "processor\t: 0\nflags\t: fpu\n",
    "empty value": "model name\t:\nmodel name\t: Second\n",
}


@pytest.mark.parametrize("name", sorted(CPUINFO))
def test_the_cpu_model_is_read_as_the_probe_reads_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO[name], encoding="utf-8")
    assert cpu_model(path) == probes_cpu_model(path)
    assert cpu_model(tmp_path / "absent") == probes_cpu_model(tmp_path / "absent")


def honest_probe(reading: MachineReading) -> dict:
    return {"torch": "2.13.0", "python": "3.11.9", "timer": "perf_counter",
            **{name: getattr(reading, name) for name in
               ("device", "gpu_name", "gpu_count", "cpu_model", "cpu_count")}}  # fmt: skip


@pytest.fixture(autouse=True)
def _no_uname(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("platform.processor", lambda: "x86_64")  # else `uname -p`: a process


def test_an_honest_probe_is_kept_and_nothing_is_overruled() -> None:
    reading = read_machine(lambda total: tuple(range(total)), gpus=lambda: ())
    assert reading.device == "cpu" and reading.gpu_count == 0
    assert reading.cpu_count == os.cpu_count()
    probe = honest_probe(reading)
    assert reading.applied(probe) == probe


def test_a_probe_naming_another_cpu_is_overruled_and_the_class_is_this_machines() -> None:
    reading = read_machine(lambda total: (), gpus=lambda: ())
    forged = {**honest_probe(reading), "cpu_model": "Forged CPU 9000", "cpu_count": 96}
    environment = part_of(Environment, reading.applied(forged))
    assert environment.probe_overruled == ("cpu_model", "cpu_count")
    machine = MachineFingerprint.from_environment(environment).hardware_class
    assert machine.cpu_model == reading.cpu_model and machine.cpu_count == os.cpu_count()
    assert "Forged" not in str(environment.to_json())


def test_a_probe_hiding_its_gpu_is_overruled_with_the_gpus_the_children_are_given() -> None:
    gpus = ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H200")
    reading = read_machine(lambda total: (2,), gpus=lambda: gpus)
    assert (reading.device, reading.gpu_name, reading.gpu_count) == ("cuda", "NVIDIA H200", 1)
    forged = {**honest_probe(reading), "device": "cpu", "gpu_name": None, "gpu_count": 0}
    assert reading.overruled(forged) == ("device", "gpu_name", "gpu_count")
    assert read_machine(lambda total: (7,), gpus=lambda: gpus).device == "cpu"  # no such GPU


@pytest.mark.parametrize(
    ("value", "seen"),
    [
        (None, (0, 1, 2, 3)),
        ("", ()),
        ("2", (2,)),
        ("3,1", (3, 1)),
        ("1,9,2", (1,)),  # CUDA stops at an index it does not have
        ("-1,0", ()),
        ("GPU-8f1c", (0,)),
    ],
)
def test_cuda_visible_devices_gives_the_children_these_gpus(value: str | None, seen: tuple) -> None:
    env = {} if value is None else {"CUDA_VISIBLE_DEVICES": value}
    assert cuda_visible(env, 4) == seen


def test_the_comparison_says_which_fields_the_probe_reported_otherwise() -> None:
    from gate_docs import environment, judge_documents, result, step, variant

    from compilegate.report.note_words import notes_words

    honest = result(step(variants=[variant()]), env=environment())
    overruled = result(
        step(variants=[variant()]), env={**environment(), "probe_overruled": ["cpu_model"]}
    )
    assert not [w for w in notes_words(judge_documents(honest, honest).notes) if "reported" in w]
    both = {**environment(), "probe_overruled": ["gpu_name", "gpu_count", "cpu_model"]}
    said_of_three = notes_words(judge_documents(honest, result(step(), env=both)).notes)
    assert any(
        w.startswith("the GPU model, GPU count and CPU model the measuring") for w in said_of_three
    )
    said = [w for w in notes_words(judge_documents(honest, overruled).notes) if "reported" in w]
    assert said == [
        "the CPU model the measuring interpreter reported differs from what compilegate read "
        "on this machine; the result records compilegate's reading, and the baseline and what "
        "is judged follow it (a pull request's packages run in that interpreter)"
    ]


@pytest.mark.parametrize(
    ("gpus", "host_env", "seen"),
    [
        (None, {}, ()),
        ("all", {}, (0, 1, 2, 3)),
        ("2", {}, (0, 1)),
        ("device=1,3", {}, (1, 3)),
        ("device=1,3", {"CUDA_VISIBLE_DEVICES": "1"}, (3,)),  # inside: the container's second
        ("all", {"CUDA_VISIBLE_DEVICES": ""}, ()),
    ],
)
def test_a_containers_children_see_the_gpus_its_device_requests_give(
    gpus: str | None, host_env: dict, seen: tuple
) -> None:
    from compilegate.containers.child_launcher import ContainerLauncher
    from compilegate.containers.docker_backend import parse_gpus
    from compilegate.run.machine_reading import gpus_given

    launcher = ContainerLauncher(
        None, "compilegate:torch-2.13.0", device_requests=parse_gpus(gpus), host_env=host_env
    )
    assert gpus_given(launcher, 4) == seen
