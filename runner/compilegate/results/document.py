"""Assemble the result document (schemas/result.schema.json) from what the children measured.

Pure functions over plain dicts (the statistics are in stats.py, the decision in
recommendation.py), plus the atomic writer: the parent writes the document
after every step, so a crash or a failing later phase loses nothing already measured.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import StepConfig, Variant
from ..config.model import DEFAULT_ACCEPT_LABEL, DEFAULT_STEPS_PER_RUN
from .compile_cost import FRESH, REUSED, compile_cost, process_compile
from .model import non_finite_paths, step_of
from .payoff import measure
from .processes import (
    all_timed_yardstick,
    compiled_values,
    eager_values,
    process_record,
    speedup_values,
    step_processes,
    variant_processes,
)
from .recommendation import analyse, recommend
from .stats import break_even_steps, process_noise_pct, ratio_of_medians, summarize
from .step_bound import step_bounds

SCHEMA_VERSION = 1


def new_document(
    environment: dict[str, Any],
    config_path: str,
    config_sha256: str,
    declared_steps: tuple[str, ...] | list[str] = (),
    accept_label: str | None = DEFAULT_ACCEPT_LABEL,
) -> dict[str, Any]:
    """The document's head; `declared_steps` names every step of the config, also those
    left out with --step, so the gate can tell a step not selected from a step removed.
    `accept_label` is the config's (gate/acceptance.py reads it from the base side only)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "compilegate", "version": __version__},
        "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": {"path": config_path, "sha256": config_sha256, "accept_label": accept_label},
        "declared_steps": list(declared_steps),
        "environment": environment,
        "steps": [],
    }


IN_PROCESS_ORDER = "base and head interleaved in the rounds of one process"


def pairing_entry(
    pairing_id: str, role: str, base_label: str, head_label: str, mode: str = "processes"
) -> dict[str, Any]:
    """The `pairing` entry of each side's document in a paired run (gate/pairing.py reads it):
    one id for the run, this side's role (`base` or `head`), how the sides are named, and
    how they were measured: `processes` (each process one side, alternating A B B A) or
    `in-process` (each timing process both sides, in the same rounds; cold compiles still
    one side per process)."""
    return {
        "id": pairing_id,
        "role": role,
        "base_label": base_label,
        "head_label": head_label,
        "mode": mode,
        "order": IN_PROCESS_ORDER if mode == "in-process" else "A B B A",
    }


def step_skeleton(step: StepConfig) -> dict[str, Any]:
    return {
        "name": step.name,
        "status": "ok",
        "error": None,
        "entry": step.entry,
        "device": None,
        "config_fingerprint": step.fingerprint(),
        "settings": {
            **step.comparable_settings(),
            "eager_processes": step.eager_processes,
            "variant_processes": step.variant_processes,
            "cold_compiles": step.cold_compiles,
            "timeout_s": step.timeout_s,
            "thresholds": dict(step.thresholds),
            "gate_compile_wall_time": step.gate_compile_wall_time,
            "env": list(step.env),
            "steps_per_run": step.steps_per_run,
            "epoch_length": step.epoch_length,
            "limits": step.limits.to_dict(),
        },
        "eager": None,
        "variants": [],
    }


def eager_entry(measured: dict[str, Any]) -> dict[str, Any]:
    timed = measured["timed"]
    a, b = timed["eager"], timed["eager_b"]
    aa = ratio_of_medians(a["samples"], a["rounds"], b["samples"], b["rounds"])
    entry = {
        "step_ms": summarize(a["samples"], a["rounds"]),
        "warmup_s": measured["warmup_s"],
        "peak_bytes": measured["peak_bytes"],
        "aa_ratio": aa.to_dict(),
        "noise_pct": aa.distance_from_one_pct,
    }
    entry.update(yardstick_entries(timed, {"per_yardstick": "eager"}))
    entry["processes"] = [process_record(measured)]
    entry["torch_state"] = measured.get("torch_state")
    _add_step_work(entry, measured)
    return entry


def _add_step_work(entry: dict[str, Any], measured: dict[str, Any]) -> None:
    """The first process's step-work counts (child/step_work.py; checked at the door,
    child/protocol.check_step_work), when it took them: a child of an earlier release, a
    timing-only or a paired process leaves the key out."""
    if measured.get("step_work") is not None:
        entry["step_work"] = measured["step_work"]


def process_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """The process record (processes.process_record) of an eager or variant entry."""
    record: dict[str, Any] = entry["processes"][0]
    return record


def add_process(entry: dict[str, Any], measured: dict[str, Any], cache_dir: str = REUSED) -> None:
    """A variant's later, timing-only process: one more record of its timing and compile
    (`cache_dir`: compile_cost.FRESH, REUSED or SHARED); the compile cost is pooled again."""
    entry["processes"].append(
        {
            **process_record(measured),
            **process_compile(measured, cache_dir),
        }
    )
    cost = entry["compile_cost"]
    entry["compile_cost"] = compile_cost(
        entry["processes"], cost["counts"], cost.get("cpu_method"), cost.get("eager_ops")
    )


def yardstick_entries(timed: dict[str, Any], ratios: dict[str, str]) -> dict[str, Any]:
    """The yardstick's own timing and each named side's time in yardstick units (timing.py)."""
    stick = timed.get("yardstick")
    if stick is None:
        return {}
    out: dict[str, Any] = {"yardstick_ms": summarize(stick["samples"], stick["rounds"])}
    for key, side in ratios.items():
        ratio = ratio_of_medians(
            timed[side]["samples"], timed[side]["rounds"], stick["samples"], stick["rounds"]
        )
        out[key] = ratio.to_dict()
    return out


def variant_skeleton(variant: Variant) -> dict[str, Any]:
    return {
        "id": variant.id,
        "mode": variant.mode,
        "dynamic": variant.dynamic,
        "compile_target": variant.compile_target,
        "fullgraph": variant.fullgraph,
        "backend": variant.backend,
        "status": "ok",
        "error": None,
    }


def variant_entry(
    variant: Variant, child: dict[str, Any], cache_dir: str = FRESH
) -> dict[str, Any]:
    """A measured variant: timings, speedup with CI, noise, compile cost, diagnostics, from
    its first process (`cache_dir`: how its Inductor cache came to it, compile_cost.py)."""
    measured = child["variant"]
    timed = measured["timed"]
    eager, eager_b, compiled = timed["eager"], timed["eager_b"], timed["compiled"]
    speedup = ratio_of_medians(
        eager["samples"], eager["rounds"], compiled["samples"], compiled["rounds"]
    )
    aa = ratio_of_medians(eager["samples"], eager["rounds"], eager_b["samples"], eager_b["rounds"])
    step_ms = summarize(compiled["samples"], compiled["rounds"])
    eager_ms = summarize(eager["samples"], eager["rounds"])
    first = {**process_record(measured), **process_compile(measured, cache_dir)}
    late_recompile_s = measured.get("late_recompile_s")  # config epoch: charged to this process
    if late_recompile_s and first.get("compile_wall_s") is not None:
        first["compile_wall_s"] += late_recompile_s
    compile_info = measured.get("compile") or {}
    cost = compile_cost(
        [first],
        compile_info.get("counts"),
        compile_info.get("cpu_method"),
        compile_info.get("eager_ops"),
    )
    compile_s = cost["wall_s"]
    noise_pct = aa.distance_from_one_pct
    entry = variant_skeleton(variant)
    entry.update(
        {
            "compile_s": compile_s,
            "compile_cost": cost,
            "compile_call_s": compile_info.get("call_s"),
            "late_recompile_s": late_recompile_s,
            "warmup_s": measured["warmup_s"],
            "eager_warmup_s": measured["eager_warmup_s"],
            "step_ms": step_ms,
            "eager_step_ms": eager_ms,
            "speedup": speedup.to_dict(),
            "aa_ratio": aa.to_dict(),
            "noise_pct": noise_pct,
            "detectable_change_pct": max(noise_pct, speedup.half_width_pct),
            "break_even_steps": break_even_steps(compile_s, eager_ms["median"], step_ms["median"]),
            "peak_bytes": measured["peak_bytes"],
            "eager_peak_bytes": measured["eager_peak_bytes"],
        }
    )
    entry.update(
        yardstick_entries(
            timed, {"eager_per_yardstick": "eager", "compiled_per_yardstick": "compiled"}
        )
    )
    entry["processes"] = [first]
    entry["torch_state"] = measured.get("torch_state")
    _add_step_work(entry, measured)
    _merge_diagnostics(entry, child.get("diagnostics") or {})
    for key in ("recompiles", "graph_breaks", "fallbacks_to_eager"):
        entry.setdefault(key, None)  # null: not measured, the diagnostics failed (`degraded`)
    if "numerics" in child:
        entry["numerics"] = numerics_without_nan(child["numerics"])
    return entry


def _merge_diagnostics(entry: dict[str, Any], diagnostics: dict[str, Any]) -> None:
    """Add the child's diagnostics without letting them overwrite anything measured: they are
    built in the process that ran the user's code, so a key that clashes with a timing, the
    speedup or the status is refused, and the variant is marked degraded (not judged)."""
    clashes = sorted(key for key in diagnostics if key in entry)
    for key, value in diagnostics.items():
        if key not in entry:
            entry[key] = value
    if clashes:
        degraded = entry.get("degraded")
        note = f"diagnostics tried to overwrite measured keys: {', '.join(clashes)[:200]}"
        entry["degraded"] = [*(degraded if isinstance(degraded, list) else []), note]


def numerics_without_nan(numerics: dict[str, Any]) -> dict[str, Any]:
    """A compiled step that produces NaN fails its numerics; the distances of its worst
    tensors are then null (the schema's "not a finite number"), not a NaN in the document."""
    worst = [
        {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in w.items()}
        for w in numerics.get("worst") or []
    ]
    return {**numerics, "worst": worst} if "worst" in numerics else numerics


def finish_step(step_doc: dict[str, Any]) -> None:
    """Once every process of a step has reported: the noise its processes' spread gives a
    comparison with an identical run (gate/judges/speed.py pools both runs' instead), each
    variant's payoff against the run length (payoff.py; its `break_even_steps` becomes that
    estimate, from every process's mean step times), and the recommendation. Computed from
    the step as measured, typed (results/model.py); written into its JSON."""
    step = step_of(step_doc)
    records = step_processes(step)
    per_yardstick = all_timed_yardstick(records)
    step_doc["process_noise_pct"] = process_noise_pct(
        eager_values(records, per_yardstick=per_yardstick)
    )
    steps = (step.settings or {}).get("steps_per_run") or DEFAULT_STEPS_PER_RUN
    for variant, entry in zip(step.variants, step_doc["variants"], strict=True):
        if variant.failed:
            continue
        mine = variant_processes(variant)
        entry["compiled_process_noise_pct"] = process_noise_pct(
            compiled_values(mine, per_yardstick=all_timed_yardstick(mine))
        )
        entry["speedup_process_noise_pct"] = process_noise_pct(speedup_values(mine))
        measured = measure(variant)
        if measured is not None:
            payoff = analyse(variant, measured, steps)
            entry["payoff"] = {k: v for k, v in payoff.items() if k not in ("variant", "text")}
            entry["break_even_steps"] = (payoff["break_even_steps"] or {}).get("estimate")
    step_doc["recommendation"] = recommend(step.variants, steps)
    bounds = step_bounds(step)
    if bounds:
        step_doc["recommendation"]["bounds"] = [bound.to_json() for bound in bounds]


def write_document(document: dict[str, Any], path: Path) -> None:
    """Write JSON atomically: a temp file in the same folder, then os.replace.

    Only standard JSON: a NaN or Infinity (which json.dump would write as a bare `NaN`
    token that other readers reject) is a ValueError naming its key path, raised before
    anything is written, so the file keeps its previous content. The run turns such
    values into a visible error of that step or variant before writing (non_finite_error).
    """
    found = non_finite_paths(document)
    if found:
        where, value = found[0]
        raise ValueError(f"{path}: not written: {value} at {where} is not a finite number")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a result is an ordinary file
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, allow_nan=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def non_finite_error(entry: dict[str, Any], prefix: str = "") -> str | None:
    """`the measurement produced NaN at speedup.median, ...`, or None when all is finite."""
    found = non_finite_paths(entry)
    if not found:
        return None
    key, value = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"the measurement produced {value} at {prefix}{key}{more}, not a finite number"
