"""One judge per metric family: `judge(sides) -> rows`, registered below in row order.

A new metric is one new judge: a function of `Sides` (the baseline's and this run's
documents of one subject, their steps, the baseline's policy, the units) returning its
rows, added to EAGER_JUDGES (rows about the step's eager time, subject variant "eager") or
VARIANT_JUDGES (rows about one compiled variant). compare.py decides what is compared with
what; the judges decide how. Its facts class joins the union gate/row_facts.py `RowFacts`,
and report/row_words/ words it (the type check fails until it does).

    speed.py          speedup, eager and compiled step time: each process's fastest iteration
    distribution.py   eager and compiled step time: each process's p25 and median
    compile_cost.py   compile work counts, compile CPU seconds, compile wall seconds
    step_work.py      what one iteration of the step does, counted (eager and compiled)
    diagnostics.py    recompiles, graph-break sites, fallbacks to eager
    cuda_graphs.py    the CUDA graphs Inductor skipped (reduce-overhead, max-autotune)
    numerics.py       pass → fail
    memory.py         peak bytes
    torch_state.py    what the step's factory changed in torch's global state (reported)
"""

from __future__ import annotations

from . import (
    compile_cost,
    cuda_graphs,
    diagnostics,
    distribution,
    memory,
    numerics,
    speed,
    step_work,
    torch_state,
)
from .sides import Judge, Sides, SpeedUnits

EAGER_JUDGES: tuple[Judge, ...] = (
    speed.judge_eager,
    distribution.judge_eager,
    step_work.judge,
    torch_state.judge,
)
VARIANT_JUDGES: tuple[Judge, ...] = (
    speed.judge_variant,
    distribution.judge_compiled,
    step_work.judge,
    compile_cost.judge,
    diagnostics.judge,
    cuda_graphs.judge,
    numerics.judge,
    memory.judge,
    torch_state.judge,
)

__all__ = ["EAGER_JUDGES", "VARIANT_JUDGES", "Judge", "Sides", "SpeedUnits"]
