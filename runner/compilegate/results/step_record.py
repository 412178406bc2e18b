"""One step of a result as the run measures it: a value, kept after every child.

The run side (run/step_measurement.py) fills a `StepRecord` in as its children report: the
device, the eager references (a typed `Eager`), each variant (a typed `Variant`, or its error),
then the step's summary (results/document.finish_step). A half-measured step is a record
too: the run writes every side's document from its records after every child, so a killed
run keeps what it measured, and run health (results/run_health.py) reads the same records.
`to_json()` is the one door out, in the shape schemas/result.schema.json gives a step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..config import StepConfig
from ..config import Variant as VariantConfig
from .model import ChildFailure, Eager, Recommendation, Status, Step, Variant


def step_settings(step: StepConfig) -> dict[str, Any]:
    """What a step records of its config: its comparable settings and how it was run (an
    open object in the schema)."""
    return {
        **step.comparable_settings(),
        "eager_processes": step.eager_processes,
        "variant_processes": step.variant_processes,
        "cold_compiles": step.cold_compiles,
        "cache_artifacts": step.cache_artifacts,
        "regional": step.regional,
        "timeout_s": step.timeout_s,
        "thresholds": dict(step.thresholds),
        "gate_compile_wall_time": step.gate_compile_wall_time,
        "env": list(step.env),
        "steps_per_run": step.steps_per_run,
        "epoch_length": step.epoch_length,
        "limits": step.limits.to_dict(),
    }


def variant_skeleton(variant: VariantConfig) -> Variant:
    """A variant's definition as the document records it (before its measurements)."""
    return Variant(
        id=variant.id,
        mode=variant.mode,
        dynamic=variant.dynamic,
        compile_target=variant.compile_target,
        fullgraph=variant.fullgraph,
        backend=variant.backend,
        status=Status.OK,
        error=None,
    )


def failed_variant(
    variant: VariantConfig, reason: str, failure: ChildFailure | None = None
) -> Variant:
    """A variant that was not measured (or whose measurement failed): its definition and why
    (`failure`: its child's cause and phase, where a child failed)."""
    return replace(variant_skeleton(variant), status=Status.ERROR, error=reason, failure=failure)


def not_run(step: StepConfig, reason: str, failure: ChildFailure | None = None) -> StepRecord:
    """A step that was not measured: it and every variant are errors, for `reason`
    (`failure`: why, as facts; `reason` then the text in it that is not compilegate's)."""
    record = StepRecord(step)
    record.mark_not_run(reason, failure)
    return record


@dataclass(frozen=True)
class StepSummary:
    """What a step's summary adds once every process has reported (document.finish_step):
    the noise of its processes, its variants with their payoff, the recommendation."""

    process_noise_pct: float | None
    variants: tuple[Variant, ...]
    recommendation: Recommendation


@dataclass
class StepRecord:
    """One step of one side, as measured so far (module docstring)."""

    config: StepConfig
    status: Status = Status.OK
    error: str | None = None
    failure: ChildFailure | None = None
    device: str | None = None
    eager: Eager | None = None
    variants: list[Variant] = field(default_factory=list)
    summary: StepSummary | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def mark_not_run(self, reason: str, failure: ChildFailure | None = None) -> None:
        """The step failed or was never reached: it and every variant are errors."""
        self.status, self.error, self.failure = Status.ERROR, reason, failure
        self.variants = [failed_variant(v, reason, failure) for v in self.config.variants]

    def fail(self, error: str, failure: ChildFailure | None = None) -> None:
        """The step failed (its eager references, its summary): the step is an error, what
        it measured stays."""
        self.status, self.error, self.failure = Status.ERROR, error, failure

    def summarize(self, summary: StepSummary) -> None:
        self.summary = summary
        self.variants = list(summary.variants)

    @property
    def recommendation(self) -> Recommendation | None:
        return self.summary.recommendation if self.summary is not None else None

    def with_recommendation(self, recommendation: Recommendation) -> None:
        """The summary with another recommendation (run health withholds one)."""
        if self.summary is not None:
            self.summary = StepSummary(
                self.summary.process_noise_pct, self.summary.variants, recommendation
            )

    def as_step(self) -> Step:
        """The record as the typed step the gate reads (the summary's figures included)."""
        return Step(
            name=self.config.name,
            status=self.status,
            variants=tuple(self.variants),
            error=self.error,
            failure=self.failure,
            entry=self.config.entry,
            device=self.device,
            config_fingerprint=self.config.fingerprint(),
            settings=step_settings(self.config),
            eager=self.eager,
            process_noise_pct=self.summary.process_noise_pct if self.summary else None,
            recommendation=self.recommendation,
        )

    def to_json(self) -> dict[str, Any]:
        """The step as the result document records it."""
        out: dict[str, Any] = {
            "name": self.config.name,
            "status": self.status.value,
            "error": self.error,
            **({"failure": self.failure.to_json()} if self.failure is not None else {}),
            "entry": self.config.entry,
            "device": self.device,
            "config_fingerprint": self.config.fingerprint(),
            "settings": step_settings(self.config),
            "eager": self.eager.to_json(as_recorded=True) if self.eager is not None else None,
            "variants": [variant.to_json(as_recorded=True) for variant in self.variants],
        }
        if self.summary is not None:
            out["process_noise_pct"] = self.summary.process_noise_pct
            out["recommendation"] = self.summary.recommendation.to_json(as_recorded=True)
        return out
