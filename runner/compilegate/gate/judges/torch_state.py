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

from ..verdict import MetricVerdict
from .sides import Sides

Doc = Mapping[str, Any]


def judge(sides: Sides) -> list[MetricVerdict]:
    base_state, cur_state = sides.json.base.get("torch_state"), sides.json.head.get("torch_state")
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


def _changed(state: Any) -> dict[str, Any]:
    changed = state.get("changed") if isinstance(state, Mapping) else None
    return dict(changed) if isinstance(changed, Mapping) else {}


def _after(change: Any) -> Any:
    return change.get("after") if isinstance(change, Mapping) else None


def _before(change: Any) -> Any:
    return change.get("before") if isinstance(change, Mapping) else None


def _listing(changed: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{name} {_before(c)!r} → {_after(c)!r}" for name, c in sorted(changed.items())
    )


def _difference(name: str, base: Any, cur: Any) -> str:
    if base is None:
        return f"{name} {_before(cur)!r} → {_after(cur)!r} (the baseline's step left it)"
    if cur is None:
        return f"{name} no longer changed (the baseline's step set it to {_after(base)!r})"
    return f"{name} → {_after(cur)!r} (the baseline's step set {_after(base)!r})"
