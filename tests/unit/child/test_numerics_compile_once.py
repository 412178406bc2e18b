"""The numerics phase compiles again only when it must (child/numerics.py).

The compiled copies here use Dynamo's `eager` backend: Dynamo traces and counts each graph as
a real compile does, in a second instead of an Inductor compile's tens of seconds. A step
that draws no random numbers is checked with the code the timed compile left in Dynamo's
cache: no graph compiled for the numerics (`compiled_graphs` 0). A step with dropout is
compiled again (with fallback_random, after a Dynamo reset), and a compiled-only difference
next to its dropout still fails.
"""

from __future__ import annotations

from dataclasses import fields

import pytest

from repo_helpers import REPO_ROOT

torch = pytest.importorskip("torch")

from compilegate.child.measure import StepBuilder  # noqa: E402 - after the torch skip
from compilegate.child.numerics import check_numerics  # noqa: E402
from compilegate.child.protocol import EntryPoint  # noqa: E402
from compilegate.child.training import TrainingStep  # noqa: E402
from compilegate.results.model import Numerics  # noqa: E402

SETTINGS = {"seed": 0, "amp": None, "numerics": {"steps": 2, "tol": 1e-4}}
VARIANT = {"id": "default", "compile_kwargs": {"backend": "eager"}, "compile_target": "model"}


def builder_for(file: str) -> StepBuilder:
    path = REPO_ROOT / "examples/test_steps" / file
    entry = EntryPoint(f"{path}:make_step", str(path), "make_step", 1)
    return StepBuilder(entry, REPO_ROOT, "cpu", 0)


def timed_then_numerics(file: str) -> dict:
    """As a variant's first process does: compile and run the timed copy, then the numerics."""
    import torch._dynamo

    torch._dynamo.reset()
    builder = builder_for(file)
    timed = TrainingStep(
        builder.build(),
        device="cpu",
        amp=None,
        compile_kwargs=VARIANT["compile_kwargs"],
        compile_target="model",
    )
    for index in range(3):
        timed(index)
    result = check_numerics(builder, SETTINGS, VARIANT, lambda phase, message: None)
    assert set(result) <= {f.name for f in fields(Numerics)}  # what the parent reads
    return result


def test_a_step_without_random_numbers_is_checked_with_the_timed_code():
    result = timed_then_numerics("fp32_mlp.py")
    assert result["status"] == "pass", result
    assert result["fallback_random"] is False
    assert result["compiled_graphs"] == 0  # no graph compiled again for the numerics
    assert result["compiled_copy_s"] >= 0


def test_a_dropout_step_is_compiled_again_and_passes():
    result = timed_then_numerics("dropout_mlp.py")
    assert result["status"] == "pass", result
    assert result["fallback_random"] is True
    assert result["compiled_graphs"] >= 1


def test_a_compiled_only_difference_next_to_dropout_still_fails():
    result = timed_then_numerics("dropout_differs.py")
    assert result["fallback_random"] is True
    assert result["status"] == "fail", result
    assert {"loss", "fc2.weight.grad"} <= set(result["failed"])
