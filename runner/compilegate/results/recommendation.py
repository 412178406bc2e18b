"""The one-line decision for a step: which compiled variant to use, or why to stay eager."""

from __future__ import annotations

from typing import Any


def recommend(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """One line: the variant to use, or why to stay eager.

    A variant is recommended only when its whole speedup interval lies above 1 and above
    the run's own A/A noise; among those, the fastest.
    """
    ok = [v for v in variants if v["status"] == "ok"]
    if not ok:
        return {"variant": None, "text": "no compiled variant ran successfully"}
    convincing = [v for v in ok if v["speedup"]["ci_low"] > 1.0 + (v.get("noise_pct") or 0.0) / 100]
    if not convincing:
        best = max(ok, key=lambda v: v["speedup"]["median"])
        sp = best["speedup"]
        return {
            "variant": None,
            "text": (
                f"stay eager: no variant is measurably faster (best {best['id']} "
                f"{sp['median']:.2f}x, 95% CI {sp['ci_low']:.2f}-{sp['ci_high']:.2f}, "
                f"noise {best.get('noise_pct') or 0:.1f}%)"
            ),
        }
    best = max(convincing, key=lambda v: v["speedup"]["median"])
    sp = best["speedup"]
    steps = best["break_even_steps"]
    pays = f"pays off after {steps:,.0f} steps" if steps is not None else "pays off at once"
    degraded = best.get("degraded") or []
    caveat = f"; but {degraded[0]}" if degraded else ""
    return {
        "variant": best["id"],
        "text": (
            f"use {best['id']}: {sp['median']:.2f}x faster (95% CI {sp['ci_low']:.2f}-"
            f"{sp['ci_high']:.2f}), compile {best['compile_s']:.1f} s, {pays}{caveat}"
        ),
    }
