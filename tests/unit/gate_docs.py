"""Small factories for result/baseline documents (valid against schemas/result.schema.json).

Every number a gate test cares about is a keyword argument; the rest is filled in with
plausible values. Timings carry raw samples in rounds, so the round-median spread can be
set too (`spread_pct`: half-range of the round medians, in percent).
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_SETTINGS = {
    "warmup": 5,
    "iterations": 40,
    "rounds": 4,
    "seed": 0,
    "amp": None,
    "threads": None,
    "timeout_s": 600.0,
    "device": "auto",
    "eager_processes": 1,
    "variant_processes": 4,
    "numerics": {"enabled": True, "steps": 2, "tol": 1e-4, "cosine_min": 0.99},
    "thresholds": {
        "speedup_drop_pct": 5.0,
        "eager_step_time_growth_pct": 5.0,
        "compiled_step_time_growth_pct": 5.0,
        "compile_time_growth_pct": 25.0,
        "peak_memory_growth_pct": 10.0,
        "recompiles_increase": 0,
        "graph_break_sites_increase": 0,
        "fallbacks_increase": 0,
    },
}


def environment(**overrides: Any) -> dict[str, Any]:
    env = {
        "torch": "2.10.0+cu128",
        "cuda": "12.8",
        "device": "cuda",
        "gpu_name": "NVIDIA H200",
        "gpu_count": 1,
        "python": "3.12.3",
        "platform": "Linux-6.8-x86_64",
        "processor": "x86_64",
        "cpu_model": "Intel(R) Xeon(R) Platinum 8480+",
        "driver": "570.124.06",
        "cpu_count": 16,
        "commit": "0123abc",
        "inductor_cache": "fresh",
    }
    env.update(overrides)
    return env


def timing(median_ms: float, *, rounds: int = 4, per_round: int = 3, spread_pct: float = 0.0):
    """Samples whose round medians alternate median·(1 ± spread_pct/100)."""
    samples, round_ids = [], []
    for r in range(rounds):
        sign = 1 if r % 2 == 0 else -1
        value = median_ms * (1 + sign * spread_pct / 100)
        samples += [value] * per_round
        round_ids += [r] * per_round
    return {"median": median_ms, "n": len(samples), "samples": samples, "rounds": round_ids}


def ratio(median: float, half_width_pct: float = 0.0) -> dict[str, Any]:
    half = median * half_width_pct / 100
    return {"median": median, "ci_low": median - half, "ci_high": median + half}


def site(file: str, line: int | None, reason: str, count: int = 1) -> dict[str, Any]:
    return {"file": file, "line": line, "reason": reason, "count": count, "in_repo": True}


def recompile(
    function: str = "forward",
    file: str = "model.py",
    line: int = 30,
    reason: str = "tensor 'x' size mismatch at index 1",
) -> dict[str, Any]:
    return {"function": function, "file": file, "line": line, "reason": reason}


def compile_cost(
    wall_s: float | None,
    *,
    cpu_s: float | None = None,
    counts: dict[str, int | None] | None = None,
    cold_cpu_s: list[float] | None = None,
    cpu_noise_pct: float | None = None,
) -> dict[str, Any]:
    """A variant's compile_cost: one cold sample unless `cold_cpu_s` lists several."""
    cpu = cpu_s if cpu_s is not None else (None if wall_s is None else wall_s * 0.8)
    keys = ("graphs", "fx_nodes", "guards", "generated_kernels", "compile_records")
    samples = [{"wall_s": wall_s, "cpu_s": c} for c in (cold_cpu_s or [cpu])]
    return {
        "wall_s": wall_s,
        "cpu_s": cpu,
        "counts": {
            **dict.fromkeys(keys, 1),
            "backward_compile_records": 1,
            **(counts or {}),
        },
        "cold_samples": samples if wall_s is not None and cpu is not None else [],
        "cpu_noise_pct": cpu_noise_pct,
        "warm_wall_s": None,
    }


def variant(
    vid: str = "default",
    *,
    speedup: float = 1.25,
    speedup_half_width_pct: float = 0.5,
    step_ms: float = 8.0,
    step_spread_pct: float = 0.0,
    noise_pct: float | None = 1.0,
    detectable_change_pct: float | None = None,
    compile_s: float | None = 10.0,
    recompiles: int = 0,
    recompile_events: list[dict[str, Any]] | None = None,
    sites: list[dict[str, Any]] | None = None,
    fallbacks: int | None = 0,
    numerics: str | None = "pass",
    failed_tensors: list[str] | None = None,
    peak_bytes: int | None = 2_000_000_000,
    status: str = "ok",
    error: str | None = None,
    mode: str = "default",
    **overrides: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": vid,
        "mode": mode,
        "dynamic": None,
        "compile_target": "model",
        "fullgraph": False,
        "backend": "inductor",
        "status": status,
        "error": error,
    }
    if status == "error":
        doc.update(overrides)
        return doc
    events = recompile_events if recompile_events is not None else [recompile()] * recompiles
    doc.update(
        {
            "compile_s": compile_s,
            "compile_cost": compile_cost(compile_s),
            "torch_state": {"changed": {}},
            "step_ms": timing(step_ms, spread_pct=step_spread_pct),
            "eager_step_ms": timing(step_ms * speedup),
            "speedup": ratio(speedup, speedup_half_width_pct),
            "aa_ratio": ratio(1.0, noise_pct or 0.0),
            "noise_pct": noise_pct,
            "detectable_change_pct": (
                detectable_change_pct if detectable_change_pct is not None else noise_pct
            ),
            "break_even_steps": 5000.0,
            "peak_bytes": peak_bytes,
            "eager_peak_bytes": peak_bytes,
            "recompiles": {
                "count": recompiles if recompile_events is None else len(events),
                "events": events,
                "limit_hit": False,
            },
            "graph_breaks": {"count": len(sites or []), "sites": list(sites or [])},
            "fallbacks_to_eager": fallbacks,
        }
    )
    if numerics is not None:
        doc["numerics"] = {"status": numerics, "failed": list(failed_tensors or [])}
    doc.update(overrides)
    return doc


def step(
    name: str = "train",
    *,
    variants: list[dict[str, Any]] | None = None,
    eager_ms: float = 10.0,
    eager_noise_pct: float | None = 1.0,
    eager_spread_pct: float = 0.0,
    fingerprint: str | None = "fp-1",
    settings: dict[str, Any] | None = None,
    thresholds: dict[str, float] | None = None,
    status: str = "ok",
    error: str | None = None,
    device: str | None = "cuda",
    entry: str = "model.py:make_step",
) -> dict[str, Any]:
    merged_settings = copy.deepcopy(DEFAULT_SETTINGS)
    merged_settings.update(settings or {})
    if thresholds:
        merged_settings["thresholds"] = {**merged_settings["thresholds"], **thresholds}
    doc: dict[str, Any] = {
        "name": name,
        "status": status,
        "error": error,
        "entry": entry,
        "device": device,
        "settings": merged_settings,
        "eager": None,
        "variants": variants if variants is not None else [variant()],
    }
    if fingerprint is not None:
        doc["config_fingerprint"] = fingerprint
    if status == "ok":
        doc["eager"] = {
            "step_ms": timing(eager_ms, spread_pct=eager_spread_pct),
            "peak_bytes": 1_500_000_000,
            "aa_ratio": ratio(1.0, eager_noise_pct or 0.0),
            "noise_pct": eager_noise_pct,
        }
    return doc


def result(
    *steps: dict[str, Any],
    env: dict[str, Any] | None = None,
    created_at: str = "2026-11-30T12:00:00+00:00",
    declared_steps: list[str] | None = None,
) -> dict[str, Any]:
    """A run's document; `declared_steps` (default: the steps it ran) as `--step` records it."""
    run_steps = list(steps) if steps else [step()]
    return {
        "schema_version": 1,
        "tool": {"name": "compilegate", "version": "0.1.0"},
        "created_at": created_at,
        "config": {
            "path": "compilegate.yml",
            "sha256": "abc",
            "accept_label": "compilegate: accept",
        },
        "declared_steps": (
            declared_steps if declared_steps is not None else [s["name"] for s in run_steps]
        ),
        "environment": env if env is not None else environment(),
        "steps": run_steps,
    }


def process(
    eager: list[float],
    compiled: list[float] | None = None,
    yardstick: list[float] | None = None,
) -> dict[str, Any]:
    """A process record (results/processes.py) from raw samples (ms); the eager twin times
    like eager, the yardstick 2 ms flat unless given."""
    samples = {"eager": list(eager), "eager_b": list(eager)}
    if compiled is not None:
        samples["compiled"] = list(compiled)
    samples["yardstick"] = list(yardstick) if yardstick is not None else [2.0] * len(eager)
    return {
        "step_ms": sorted(eager)[len(eager) // 2],
        "fastest_ms": {side: min(values) for side, values in samples.items()},
        "samples_ms": samples,
    }


def with_processes(
    doc: dict[str, Any], eager: list[dict[str, Any]], variants: list[list[dict[str, Any]]]
) -> dict[str, Any]:
    """`doc` (a step) with these eager-reference and per-variant process records."""
    doc["eager"]["processes"] = eager
    for entry, records in zip(doc["variants"], variants):
        entry["processes"] = records
    return doc


# Five runs of the default branch that agree within about ±1 %.
STEADY_HISTORY = (0.99, 1.0, 1.01, 0.995, 1.005)


def with_history(step_doc: dict[str, Any], scatter: tuple[float, ...] = STEADY_HISTORY):
    """The step as a baseline whose default branch recorded it once per factor of `scatter`
    (gate/history.py): each run's eager times scaled by its factor, its compiled times by
    another one's, the yardstick left alone. A stored baseline judges absolute step times
    only with such a history (gate/judges/speed.py, step_time_gate)."""
    runs = []
    for index, factor in enumerate(scatter):
        compiled_factor = scatter[(index + 2) % len(scatter)]
        run = copy.deepcopy(step_doc)
        records = list(run["eager"].get("processes") or [])
        for variant_doc in run["variants"]:
            records.extend(variant_doc.get("processes") or [])
        for record in records:
            for key in ("fastest_ms", "samples_ms"):
                for side, value in (record.get(key) or {}).items():
                    scale = compiled_factor if side == "compiled" else factor
                    if side == "yardstick":
                        continue
                    record[key][side] = (
                        [v * scale for v in value] if isinstance(value, list) else value * scale
                    )
        runs.append(run_summary(run))
    step_doc["history"] = runs
    return step_doc


def judge_documents(baseline: dict[str, Any], current: dict[str, Any], *args: Any, **kwargs: Any):
    """compare_to_baseline on two JSON-shaped documents, each read through the door first
    (results/model.parse), as every caller of the gate reads them."""
    from compilegate.gate.compare import compare_to_baseline
    from compilegate.results.model import parse

    return compare_to_baseline(
        parse(baseline, "baseline.json", "baseline"),
        parse(current, "result.json", "result"),
        *args,
        **kwargs,
    )


def run_summary(step_doc: dict[str, Any]) -> dict[str, Any] | None:
    """One run of the step (JSON-shaped) as a baseline's history keeps it, as JSON
    (results/processes.run_summary of the step through the door)."""
    from compilegate.results.model import step_of
    from compilegate.results.processes import run_summary as summary_of

    summary = summary_of(step_of(step_doc))
    return summary.to_json() if summary is not None else None


def merge_documents(old: dict[str, Any] | None, new: dict[str, Any], path: Any = None):
    """`baseline update`'s merge (gate/baseline.merge_into_baseline) of JSON-shaped
    documents, each through the door (results/model.parse); the merged baseline as JSON."""
    from compilegate.gate.baseline import merge_into_baseline
    from compilegate.results.model import parse

    base = parse(old, "baseline.json", "baseline") if old is not None else None
    merged, update = merge_into_baseline(base, parse(new, "result.json", "result"), path)
    return merged.to_json(), update
