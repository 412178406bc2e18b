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
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from ...results.model import TorchState
from ..row_facts_base import RowFactsBase
from ..verdict import MetricVerdict, Verdict
from .sides import Sides


@dataclass(frozen=True)
class StateChange:
    """One setting the step's factory changed: its value before and after."""

    name: str
    before: Any
    after: Any


@dataclass(frozen=True)
class StateDifference:
    """A setting the two steps changed differently: how each side changed it (None: that
    side's step left it)."""

    name: str
    baseline: StateChange | None
    run: StateChange | None


class TorchStateOutcome(str, Enum):
    NOT_RECORDED = "not_recorded"  # this run has no record
    BASELINE_PREDATES = "baseline_predates"  # this run changed it; the baseline has no record
    DIFFERS = "differs"
    AS_IN_BASELINE = "as_in_baseline"


@dataclass(frozen=True)
class TorchStateFacts(RowFactsBase):
    """`changes`: what this run's step changed, by name; `differences`: the settings the
    two steps changed differently, by name (DIFFERS)."""

    kind: ClassVar[str] = "torch_state"
    outcome: TorchStateOutcome
    changes: tuple[StateChange, ...] = ()
    differences: tuple[StateDifference, ...] = ()


def judge(sides: Sides) -> list[MetricVerdict]:
    base_state, cur_state = sides.base.torch_state, sides.head.torch_state
    if base_state is None and cur_state is None:
        return []
    base = _changed(base_state)
    cur = _changed(cur_state)
    changes = tuple(cur[name] for name in sorted(cur))
    if cur_state is None:
        facts = TorchStateFacts(TorchStateOutcome.NOT_RECORDED)
    elif base_state is None:
        if not cur:
            return []
        facts = TorchStateFacts(TorchStateOutcome.BASELINE_PREDATES, changes)
    else:
        differences = tuple(
            StateDifference(name, base.get(name), cur.get(name))
            for name in sorted(set(base) | set(cur))
            if _after(base.get(name)) != _after(cur.get(name))
        )
        if differences:
            facts = TorchStateFacts(TorchStateOutcome.DIFFERS, changes, differences)
        elif cur:
            facts = TorchStateFacts(TorchStateOutcome.AS_IN_BASELINE, changes)
        else:
            return []  # neither step touched it: nothing to say
    return [
        sides.subject.row(
            "torch_state",
            Verdict.PASS,
            unit="status",
            baseline=len(base) if base_state is not None else None,
            current=len(cur) if cur_state is not None else None,
            gated=False,
            facts=facts,
        )
    ]


def _changed(state: TorchState | None) -> dict[str, StateChange]:
    if state is None:
        return {}
    return {name: _change(name, change) for name, change in state.changed.items()}


def _change(name: str, change: Mapping[str, Any]) -> StateChange:
    # {"before": ..., "after": ...}: the schema requires both
    return StateChange(name, change["before"], change["after"])


def _after(change: StateChange | None) -> Any:
    return change.after if change is not None else None
