"""The one-line decision for a step: which compiled variant to use, or why to stay eager."""

from __future__ import annotations

from typing import Any

# Numerics statuses that rule a variant out: it computes something else than eager, or
# nobody could tell whether it does.
DISQUALIFYING_NUMERICS = {"fail": "its numerics fail", "error": "its numerics check errored"}


def recommend(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """One line: the variant to use, or why to stay eager.

    A variant is recommended only when its numerics did not fail or error, and its whole
    speedup interval lies above 1 and above the run's own A/A noise; among those, the
    fastest. A degraded one (graph breaks, fallbacks, failed diagnostics) says so, and so
    does one whose numerics were not checked. A faster variant ruled out by its numerics is
    named, so nobody picks it by hand from the table.
    """
    ok = [v for v in variants if v["status"] == "ok"]
    if not ok:
        return {"variant": None, "text": "no compiled variant ran successfully"}
    trusted = [v for v in ok if _numerics_problem(v) is None]
    convincing = [
        v for v in trusted if v["speedup"]["ci_low"] > 1.0 + (v.get("noise_pct") or 0.0) / 100
    ]
    fastest = max(ok, key=lambda v: v["speedup"]["median"])
    ruled_out = ""
    if _numerics_problem(fastest) is not None and (
        not convincing or fastest["speedup"]["median"] > _best(convincing)["speedup"]["median"]
    ):
        ruled_out = (
            f"; {fastest['id']} ({fastest['speedup']['median']:.2f}x) is not recommended: "
            f"{_numerics_problem(fastest)}"
        )
    if not convincing:
        if not trusted:
            return {
                "variant": None,
                "text": "stay eager: no variant's numerics can be trusted" + ruled_out,
            }
        best = _best(trusted)
        sp = best["speedup"]
        return {
            "variant": None,
            "text": (
                f"stay eager: no variant is measurably faster (best {best['id']} "
                f"{sp['median']:.2f}x, 95% CI {sp['ci_low']:.2f}-{sp['ci_high']:.2f}, "
                f"noise {best.get('noise_pct') or 0:.1f}%){ruled_out}"
            ),
        }
    best = _best(convincing)
    sp = best["speedup"]
    steps = best["break_even_steps"]
    pays = f"pays off after {steps:,.0f} steps" if steps is not None else "pays off at once"
    return {
        "variant": best["id"],
        "text": (
            f"use {best['id']}: {sp['median']:.2f}x faster (95% CI {sp['ci_low']:.2f}-"
            f"{sp['ci_high']:.2f}), compile {best['compile_s']:.1f} s, {pays}"
            f"{_caveats(best)}{ruled_out}"
        ),
    }


def _best(variants: list[dict[str, Any]]) -> dict[str, Any]:
    return max(variants, key=lambda v: v["speedup"]["median"])


def _numerics_problem(variant: dict[str, Any]) -> str | None:
    status = (variant.get("numerics") or {}).get("status")
    return DISQUALIFYING_NUMERICS.get(status or "")


def _caveats(variant: dict[str, Any]) -> str:
    """What the user must know before following the advice: degradation, unchecked numerics."""
    out = ""
    degraded = variant.get("degraded") or []
    if degraded:
        more = f" (and {len(degraded) - 1} more)" if len(degraded) > 1 else ""
        out += f"; but degraded: {degraded[0]}{more}"
    if (variant.get("numerics") or {}).get("status") != "pass":
        out += "; numerics not checked"
    return out
