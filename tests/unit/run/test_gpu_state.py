"""The GPU's state while a run measured (run/gpu_state.py) and what run health makes of it
(issue 28): clocks and throttling while busy, other processes, NVML's facts; no NVML, no
entry."""

from __future__ import annotations

from compilegate.report.health_words import said as say
from compilegate.results.model import GpuHealth, MachineHealth
from compilegate.results.run_health import run_health
from compilegate.run.gpu_state import GpuSample, GpuSampler

FACTS = {
    "name": "NVIDIA H200",
    "driver": "580.159.04",
    "persistence_mode": True,
    "power_limit_w": 700.0,
}


class FakeNvml:
    def __init__(self, samples: list[GpuSample]) -> None:
        self.samples = samples
        self.closed = False

    def facts(self) -> dict:
        return dict(FACTS)

    def sample(self) -> GpuSample:
        return self.samples.pop(0) if len(self.samples) > 1 else self.samples[0]

    def close(self) -> None:
        self.closed = True


def sampled(*samples: GpuSample, ours: set[int] = frozenset({10})) -> GpuHealth | None:
    nvml = FakeNvml(list(samples))
    sampler = GpuSampler(open_nvml=lambda: nvml, read_own_pids=lambda: set(ours))
    sampler.start()
    for _ in samples[1:]:
        sampler._sample()
    sampler.stop()
    assert nvml.closed
    return sampler.summary()


def steady(sm: int = 1980, busy: int = 90, reasons: int = 0, pids=(10,)) -> GpuSample:
    return GpuSample(busy, sm, 3201, reasons, tuple(pids))


def test_a_dedicated_gpu_at_a_fixed_clock_is_steady() -> None:
    gpu = sampled(steady(), steady(), steady(busy=0, sm=345))  # idle between children
    assert gpu is not None
    assert gpu.sm_mhz_min == gpu.sm_mhz_max == 1980 and gpu.busy_samples == 2
    assert gpu.throttled == () and gpu.other_processes == 0
    assert gpu.name == "NVIDIA H200" and gpu.persistence_mode is True
    assert run_health(MachineHealth(), [], gpu).unsteady == ()


def test_throttling_a_moving_clock_and_a_neighbour_each_make_a_run_unsteady() -> None:
    for samples, said in (
        ((steady(), steady(reasons=0x4)), "the GPU throttled (software power cap)"),
        ((steady(), steady(reasons=0x20 | 0x1)), "software thermal slowdown"),
        ((steady(), steady(sm=1410)), "SM clock moved 1410–1980 MHz while it worked"),
        ((steady(), steady(pids=(10, 4242))), "1 other process used the GPU"),
    ):
        health = run_health(MachineHealth(), [], sampled(*samples))
        assert any(said in say(cause).full for cause in health.unsteady), health.unsteady


def test_idle_clocks_and_benign_reasons_are_not_unsteady() -> None:
    gpu = sampled(steady(), steady(busy=0, sm=210, reasons=0x1), steady(reasons=0x2))
    assert run_health(MachineHealth(), [], gpu).unsteady == ()


def test_without_nvml_there_is_no_entry() -> None:
    sampler = GpuSampler(open_nvml=lambda: None).start()
    sampler.stop()
    assert sampler.summary() is None
    assert run_health(MachineHealth(), [], None).gpu is None


def test_children_in_containers_leave_other_processes_uncounted() -> None:
    nvml = FakeNvml([steady(pids=(10, 4242))])
    sampler = GpuSampler(children_local=False, open_nvml=lambda: nvml).start()
    sampler.stop()
    summary = sampler.summary()
    assert summary is not None and summary.other_processes is None


def test_the_real_nvml_answers_or_says_none() -> None:
    """On this machine (no GPU) NVML cannot start: the sampler records nothing, no error."""
    sampler = GpuSampler().start()
    sampler.stop()
    summary = sampler.summary()
    assert summary is None or summary.name
