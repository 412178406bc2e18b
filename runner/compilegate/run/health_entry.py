"""A result's `run_health` entry as the run records it: what results/run_health.py measured
of the machine and the run, and why it was unsteady in the report's words
(report/health_words.py), the document's `unsteady` list (empty when steady)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..report.health_words import recorded_sentences
from ..results.model import GpuHealth, MachineHealth, RunHealth, Step
from ..results.run_health import run_health as measured_health


def run_health(
    machine: MachineHealth, steps: Sequence[Step], gpu: GpuHealth | None = None
) -> RunHealth:
    """The `run_health` entry of a result: the machine's load, the GPU's state, the run's own
    signs of it in its `steps` as measured (typed), and the reasons (empty when steady)."""
    health = measured_health(machine, steps, gpu)
    return replace(health, unsteady=tuple(recorded_sentences(health)))
