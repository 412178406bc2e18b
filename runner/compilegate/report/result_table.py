"""Render a result document as the plain-text table `compilegate run` prints: no line wider
than 100 columns (cells and notes wrap)."""

from __future__ import annotations

from typing import Any

from ..results.run_health import health_line
from .speeds import estimator_text, variant_speed
from .tables import printable, text_table, wrap

WIDTH = 100

COLUMNS = (
    "variant",
    "speedup (95% CI)",
    "eager ms",
    "compiled ms",
    "compile s",
    "break-even steps (95% for a run)",
    "peak MB",
    "breaks, recompiles",
    "numerics",
)
PEAK = COLUMNS.index("peak MB")


def render_result_table(document: dict[str, Any]) -> str:
    env = document["environment"]
    where = env.get("gpu_name") or f"CPU ({env.get('cpu_count')} cores)"
    lines = wrap(
        f"compilegate {document['tool']['version']} · torch {env.get('torch')} · "
        f"{where} · Python {env.get('python')} · inductor cache {env.get('inductor_cache')}",
        WIDTH,
    )
    health = health_line(document)
    if health:
        lines.extend(wrap(health, WIDTH))
    for step in document["steps"]:
        lines.append("")
        lines.extend(render_step(step))
    return printable("\n".join(lines) + "\n")


def render_step(step: dict[str, Any]) -> list[str]:
    header = f"step {step['name']} ({step.get('device') or '?'})"
    if step["status"] == "error":
        return [header, *wrap(f"ERROR {step['error']}", WIDTH, indent="  ", hanging="    ")]
    eager = step["eager"]
    per_process = [p["step_ms"] for p in eager.get("processes") or [] if p.get("step_ms")]
    shown = ", ".join(f"{ms:.3f}" for ms in per_process) or f"{eager['step_ms']['median']:.3f}"
    lines = wrap(
        f"{header}: eager {shown} ms/step in {max(len(per_process), 1)} reference "
        f"process(es) (A/A noise {_pct(eager.get('noise_pct'))}); each variant row re-times "
        "eager in its own process, interleaved with the compiled copy",
        WIDTH,
        hanging="  ",
    )
    rows = [COLUMNS]
    notes = []
    estimators: set[str] = set()
    for v in step["variants"]:
        if v["status"] != "ok":
            rows.append((v["id"], "ERROR", *["-"] * (len(COLUMNS) - 2)))
            notes += wrap(f"{v['id']}: {v['error']}", WIDTH, indent="  ", hanging="    ")
            continue
        speed = variant_speed(step, v)
        if speed is not None:
            estimators.add(speed.estimator)
        rows.append(
            (
                v["id"],
                "-" if speed is None else speed.text(),
                f"{v['eager_step_ms']['median']:.3f}",
                f"{v['step_ms']['median']:.3f}",
                f"{v['compile_s']:.1f}",
                _break_even(v),
                _megabytes(v.get("peak_bytes"), v.get("eager_peak_bytes")),
                f"{_count(v.get('graph_breaks'))}, {_count(v.get('recompiles'))}",
                (v.get("numerics") or {}).get("status", "-"),
            )
        )
        for reason in v.get("degraded") or []:
            notes += wrap(f"{v['id']}: degraded: {reason}", WIDTH, indent="  ", hanging="    ")
    if all(row[PEAK] in ("n/a", "-") for row in rows[1:]):  # CPU: no peak memory measured
        rows = [(*row[:PEAK], *row[PEAK + 1 :]) for row in rows]
    lines.extend(text_table(rows, indent="  ", width=WIDTH))
    lines.extend(notes)
    for estimator in sorted(estimators):  # one speed per variant, its estimator named once
        lines += wrap(
            f"speedup: {estimator_text(estimator)}; eager/compiled ms: medians of the first "
            "process; break-even: estimate (95 % interval for a run)",
            WIDTH,
            indent="  ",
            hanging="    ",
        )
    recommendation = step.get("recommendation")
    if recommendation:
        lines += wrap(f"→ {recommendation['text']}", WIDTH, indent="  ", hanging="    ")
    return lines


def _break_even(variant: dict[str, Any]) -> str:
    """The break-even the decision uses (payoff), with its interval when there is one."""
    interval = (variant.get("payoff") or {}).get("break_even_steps")
    if not isinstance(interval, dict):
        return _count_of_steps(variant.get("break_even_steps"))
    shown = _count_of_steps(interval.get("estimate"))
    low, high = interval.get("low"), interval.get("high")
    if low is None and high is None:
        return shown
    return f"{shown} ({_count_of_steps(low)}-{_count_of_steps(high)})"


def _count_of_steps(value: float | None) -> str:
    return "never" if value is None else f"{value:,.0f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"±{value:.1f}%"


def _steps(value: float | None) -> str:
    return "never" if value is None else f"{value:,.0f} steps"


def _megabytes(peak: int | None, eager_peak: int | None) -> str:
    if peak is None:
        return "n/a"
    text = f"{peak / 2**20:.0f}"
    return f"{text} (eager {eager_peak / 2**20:.0f})" if eager_peak is not None else text


def _count(section: dict[str, Any] | None) -> str:
    return "-" if section is None else str(section.get("count", "-"))
