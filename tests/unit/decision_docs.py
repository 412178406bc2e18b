"""Variants as the result document holds them, made from per-process speedups: each process
times eager (two copies) and compiled in rounds, with a small deterministic jitter."""

from __future__ import annotations

import statistics
from typing import Any

ROUNDS = 5
PER_ROUND = 4


def samples(
    mean_ms: float, *, jitter: float = 0.02, outliers: int = 0, phase: int = 0
) -> list[float]:
    """ROUNDS × PER_ROUND samples around `mean_ms` (± jitter), mean exactly `mean_ms` when
    there are no outliers; `outliers` iterations 3× slower at the end."""
    n = ROUNDS * PER_ROUND
    offsets = [((i * 7 + phase) % 5 - 2) / 2 * jitter for i in range(n)]  # mean 0
    values = [mean_ms * (1 + o) for o in offsets]
    for k in range(outliers):
        values[n - 1 - k] = mean_ms * 3
    return values


def timing(values: list[float]) -> dict[str, Any]:
    """A timing entry of these samples, timed in ROUNDS rounds."""
    return {"median": statistics.median(values), "samples": values, "rounds": rounds()}


def rounds() -> list[int]:
    return [r for r in range(ROUNDS) for _ in range(PER_ROUND)]


def process(speedup: float, *, eager_ms: float = 10.0, **extra: Any) -> dict[str, Any]:
    eager = samples(eager_ms)
    compiled = samples(eager_ms / speedup, phase=2)
    return {
        "step_ms": eager_ms,
        "fastest_ms": {"eager": min(eager), "eager_b": min(eager), "compiled": min(compiled)},
        "samples_ms": {"eager": eager, "eager_b": list(eager), "compiled": compiled},
        **extra,
    }


def variant(
    vid: str,
    speedups: list[float],
    *,
    compile_s: float = 20.0,
    eager_ms: float = 10.0,
    numerics: str | None = "pass",
    degraded: list[str] | None = None,
    cold_samples: list[float] | None = None,
    warm_s: float | None = None,
) -> dict[str, Any]:
    """A measured variant: its first process cold, the others warm (`warm_s` compile seconds)."""
    records = [process(speedups[0], eager_ms=eager_ms, cache="cold", compile_wall_s=compile_s)]
    for s in speedups[1:]:
        extra = {"cache": "warm", "compile_wall_s": warm_s} if warm_s is not None else {}
        records.append(process(s, eager_ms=eager_ms, **extra))
    first = records[0]["samples_ms"]
    doc: dict[str, Any] = {
        "id": vid,
        "mode": "default",
        "compile_target": "model",
        "status": "ok",
        "compile_s": compile_s,
        "speedup": {"median": speedups[0], "ci_low": speedups[0], "ci_high": speedups[0]},
        "eager_step_ms": timing(first["eager"]),
        "step_ms": timing(first["compiled"]),
        "degraded": degraded or [],
        "processes": records,
    }
    if cold_samples is not None:
        doc["compile_cost"] = {
            "wall_s": compile_s,
            "counts": {},
            "cold_samples": [{"wall_s": w, "cpu_s": w} for w in cold_samples],
        }
    if numerics is not None:
        doc["numerics"] = {"status": numerics}
    return doc


def typed(variants: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The variants (JSON-shaped) as a step through the door reads them (results/model)."""
    from compilegate.results.model import step_of

    return step_of({"name": "train", "status": "ok", "variants": list(variants)}).variants


def recommend(variants: list[dict[str, Any]], steps_per_run: int | None = None) -> dict[str, Any]:
    """results/recommendation.recommend of JSON-shaped variants, read through the door, as
    the document records it (facts only), with `text`: the decision in full as the report
    words those facts (report/decision_words.py)."""
    from compilegate.report.decision_words import decision_sentence
    from compilegate.results import recommendation
    from compilegate.results.model import Status, Step

    measured = typed(variants)
    if steps_per_run is None:
        advice = recommendation.recommend(measured)
    else:
        advice = recommendation.recommend(measured, steps_per_run)
    recorded = advice.to_json(as_recorded=True)
    assert "text" not in recorded  # results/ records facts, never words (issue 53)
    step = Step(name="train", status=Status.OK, variants=measured, recommendation=advice)
    return {**recorded, "text": decision_sentence(step)}


def measure(variant_doc: dict[str, Any]) -> Any:
    """results/payoff.measure of a JSON-shaped variant, read through the door."""
    from compilegate.results.payoff import measure as measure_variant

    return measure_variant(typed([variant_doc])[0])


def as_processes(records: list[dict[str, Any]]) -> list[Any]:
    """Process records (JSON-shaped, as the run side writes them) as the door reads them."""
    variant_doc = {"id": "v", "mode": "default", "compile_target": "model", "status": "ok"}
    return list(typed([{**variant_doc, "processes": records}])[0].processes)
