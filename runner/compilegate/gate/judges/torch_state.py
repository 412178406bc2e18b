"""Torch state: what the step's factory changed in torch's global state, against what the
baseline's factory changed (`torch_state.changed` of the eager entry and of each variant:
threads, interop threads, float32 matmul precision, TF32 flags, deterministic algorithms,
default dtype).

The yardstick is timed in the state before the factory ran, so a factory that calls
`torch.set_num_threads(1)` no longer moves the unit step times are judged in; its effect on
the step itself is the pull request's effect and is judged by the speed rows. This row
names the change so a reader knows where a speed change came from (`TF32 on` explains a
faster matmul). It is reported, not gated (`gated` false): the speed, numerics and memory
rows judge the consequences.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...results.model import TorchState
from ..verdict import MetricVerdict
from .sides import Sides

# One setting's change: {"before": ..., "after": ...} (the schema requires both).
Change = Mapping[str, Any]


def judge(sides: Sides) -> list[MetricVerdict]:
    base_state, cur_state = sides.base.torch_state, sides.head.torch_state
    if base_state is None and cur_state is None:
        return []
    base = _changed(base_state)
    cur = _changed(cur_state)
    if cur_state is None:
        message = "torch state: not recorded in this run"
    elif base_state is None:
        if not cur:
            return []
        message = (
            f"the step changes torch state: {_listing(cur)} (the baseline predates this record)"
        )
    else:
        differences = [
            _difference(name, base.get(name), cur.get(name))
            for name in sorted(set(base) | set(cur))
            if _after(base.get(name)) != _after(cur.get(name))
        ]
        if differences:
            message = "the step changes torch state unlike the baseline: " + "; ".join(differences)
        elif cur:
            message = f"the step changes torch state as in the baseline: {_listing(cur)}"
        else:
            return []  # neither step touched it: nothing to say
    return [
        sides.subject.row(
            "torch_state",
            "pass",
            message,
            unit="status",
            baseline=len(base) if base_state is not None else None,
            current=len(cur) if cur_state is not None else None,
            gated=False,
        )
    ]


def _changed(state: TorchState | None) -> dict[str, Change]:
    return dict(state.changed) if state is not None else {}


def _after(change: Change | None) -> Any:
    return change["after"] if change is not None else None


def _before(change: Change | None) -> Any:
    return change["before"] if change is not None else None


def _listing(changed: Mapping[str, Change]) -> str:
    return ", ".join(
        f"{name} {_before(c)!r} → {_after(c)!r}" for name, c in sorted(changed.items())
    )


def _difference(name: str, base: Change | None, cur: Change | None) -> str:
    if base is None:
        return f"{name} {_before(cur)!r} → {_after(cur)!r} (the baseline's step left it)"
    if cur is None:
        return f"{name} no longer changed (the baseline's step set it to {_after(base)!r})"
    return f"{name} → {_after(cur)!r} (the baseline's step set {_after(base)!r})"
