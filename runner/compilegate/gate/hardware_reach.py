"""Which metrics a result may be judged on against a baseline of another hardware class.

A runner pool's nodes differ; a leg whose class has no baseline of its own yet (a new node
type) is judged against another class's (gate/class_baselines.py). What the hardware moves
is then a difference of machines, not of code, so compare.py keeps only the rows of metrics
whose reach covers the two classes, and says in one row per step that the rest was not
judged (comparability.OtherClassFacts):

    ANY_MACHINE       graph-break sites, recompiles, fallbacks to eager, DDP splits,
                      numerics pass/fail, torch state: functions of the code, the torch
                      version and the shapes (numerics is each run's own check of compiled
                      against eager on its machine, so its pass/fail travels)
    SAME_DEVICE_TYPE  step work and compile work: exact counts, the same on any machine of
                      a device type, but not across types — ATen picks other ops per device
                      (SDPA's flash or efficient kernels on CUDA, the math path on CPU),
                      and Inductor generates Triton kernels for a GPU and C++/OpenMP loops for
                      a CPU, fused differently
    (the rest)        speedup, step times and their quantiles, compile wall and CPU seconds,
                      compile instructions, peak memory: measured by the machine itself

A metric this table does not name is not judged across classes: a new judge's rows stay
unjudged there until someone decides they travel.
"""

from __future__ import annotations

from enum import Enum


class Reach(str, Enum):
    """Between which machines a metric's change means a change of the code."""

    ANY_MACHINE = "any_machine"
    SAME_DEVICE_TYPE = "same_device_type"


METRIC_REACH: dict[str, Reach] = {
    "graph_break_sites": Reach.ANY_MACHINE,
    "recompiles": Reach.ANY_MACHINE,
    "fallbacks_to_eager": Reach.ANY_MACHINE,
    "ddp_splits": Reach.ANY_MACHINE,
    "numerics": Reach.ANY_MACHINE,
    "torch_state": Reach.ANY_MACHINE,
    "step_work": Reach.SAME_DEVICE_TYPE,
    "compile_work": Reach.SAME_DEVICE_TYPE,
}


def judged_across_classes(metric: str, same_device_type: bool) -> bool:
    """Whether a row of `metric` is judged against a baseline of another hardware class."""
    reach = METRIC_REACH.get(metric)
    if reach is Reach.ANY_MACHINE:
        return True
    return reach is Reach.SAME_DEVICE_TYPE and same_device_type


def metrics_judged_across(same_device_type: bool) -> tuple[str, ...]:
    """The metrics judged across classes, in table order (for the report's words)."""
    return tuple(m for m in METRIC_REACH if judged_across_classes(m, same_device_type))
