"""What a result's compile time is, said the same way wherever it is shown.

A result has one compile time per variant: its first process's cold compile in wall seconds
(`compile_s`, results/compile_cost.py) — what a run waits before its first compiled step,
and the figure the gate's compile-time row compares. `run`'s table, `report` and the
comment's variant tables all show it. When a variant compiled cold in several processes
(torch 2.4 has the FX-graph cache off: every process compiles cold), the break-even divides
the geometric mean of those cold compiles instead (results/payoff.py): that is said as what
it is, never as a second "compile time".
"""

from __future__ import annotations

from collections.abc import Sequence

COMPILE_TIME = (
    "the first process's cold compile in wall seconds (what a run waits for; the gate compares it)"
)

# Under the comment's and `report`'s variant tables, whose column is "compile".
COMPILE_COLUMN = f"compile: {COMPILE_TIME}."


def compile_time_legend(cold_compiles: Sequence[int]) -> str | None:
    """The legend's sentence on `compile s` and the break-even, from how many cold compiles
    each shown variant measured; None when no variant shows a compile time."""
    if not cold_compiles:
        return None
    pooled = sorted({n for n in cold_compiles if n > 1})
    if pooled:
        counts = " or ".join(str(n) for n in pooled)
        divided = f"the geometric mean of the variant's cold compiles ({counts} of them)"
    else:
        divided = "compile s"
    return (
        f"compile s: {COMPILE_TIME}; break-even: {divided} ÷ time saved per step, "
        "95 % interval for one run."
    )
