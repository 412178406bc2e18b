"""The words of a torch-state row (gate/judges/torch_state.py)."""

from __future__ import annotations

from collections.abc import Iterable

from ...gate.judges.torch_state import (
    StateChange,
    StateDifference,
    TorchStateFacts,
    TorchStateOutcome,
)
from ...gate.verdict import MetricVerdict


def torch_state_words(row: MetricVerdict, facts: TorchStateFacts) -> str:
    if facts.outcome is TorchStateOutcome.NOT_RECORDED:
        return "torch state: not recorded in this run"
    if facts.outcome is TorchStateOutcome.BASELINE_PREDATES:
        return (
            f"the step changes torch state: {_listing(facts.changes)} "
            "(the baseline predates this record)"
        )
    if facts.outcome is TorchStateOutcome.DIFFERS:
        return "the step changes torch state unlike the baseline: " + "; ".join(
            _difference(d) for d in facts.differences
        )
    return f"the step changes torch state as in the baseline: {_listing(facts.changes)}"


def _listing(changes: Iterable[StateChange]) -> str:
    return ", ".join(f"{c.name} {c.before!r} → {c.after!r}" for c in changes)


def _difference(difference: StateDifference) -> str:
    name, base, cur = difference.name, difference.baseline, difference.run
    if base is None and cur is not None:
        return f"{name} {cur.before!r} → {cur.after!r} (the baseline's step left it)"
    if cur is None and base is not None:
        return f"{name} no longer changed (the baseline's step set it to {base.after!r})"
    assert base is not None and cur is not None
    return f"{name} → {cur.after!r} (the baseline's step set {base.after!r})"
