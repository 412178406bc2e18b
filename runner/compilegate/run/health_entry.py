"""A result's `run_health` entry as the run records it: what results/run_health.py measured
of the machine and the run, and why it was unsteady in the report's words
(report/health_words.py), the document's `unsteady` list (empty when steady)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..report.health_words import recorded_sentences
from ..results.model import Step, health_of
from ..results.run_health import run_health as measured_health


def run_health(
    machine: Mapping[str, Any], steps: Sequence[Step], gpu: Mapping[str, Any] | None = None
) -> dict[str, object]:
    """The `run_health` entry of a result: the machine's load, the GPU's state, the run's own
    signs of it in its `steps` as measured (typed), and the reasons (empty when steady)."""
    health = measured_health(machine, steps, gpu)
    health["unsteady"] = recorded_sentences(health_of(health))
    return health
