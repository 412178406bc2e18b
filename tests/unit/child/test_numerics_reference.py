"""The float64 reference computes eager's step on eager's data (eager copies only, no compile).

A batch drawn at call time (`torch.randn(..., generator=g)`) must reach the reference as
eager drew it, then cast: drawn again under a float64 default dtype it is other numbers, the
reference's loss is ~5 % off eager's, and a compiled error below twice that passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_helpers import REPO_ROOT

torch = pytest.importorskip("torch")

from compilegate.child.measure import StepBuilder  # noqa: E402 - after the torch skip
from compilegate.child.numerics import (  # noqa: E402
    REFERENCE_LOSS_REL_TOL,
    reference_disagreement,
    run_copy,
)
from compilegate.child.protocol import EntryPoint  # noqa: E402
from compilegate.child.training import seed_everything  # noqa: E402
from compilegate.child.user_code import StepParts  # noqa: E402
from compilegate.report.numerics_words import disagreement_words  # noqa: E402
from compilegate.results.model import ReferenceDisagreement, part_of  # noqa: E402

SETTINGS = {"seed": 0, "amp": None}


def said(disagreement: dict) -> str:
    """What the report says of the child's disagreement (report/numerics_words.py)."""
    return disagreement_words(part_of(ReferenceDisagreement, disagreement))


def builder_for(file: str, function: str = "make_step") -> StepBuilder:
    path = REPO_ROOT / "examples/test_steps" / file
    entry = EntryPoint(f"{path}:{function}", str(path), function, 1)
    return StepBuilder(entry, REPO_ROOT, "cpu", 0)


def relative(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm()) if b.norm() > 0 else float((a - b).norm())


def test_reference_draws_the_batch_as_eager_does_then_casts():
    builder = builder_for("batch_at_call_time.py")
    eager = run_copy(builder, SETTINGS, 2)
    reference = run_copy(builder, SETTINGS, 2, float64=True)
    for e_step, r_step in zip(eager, reference):
        assert r_step["loss"][1].dtype == torch.float64
        assert relative(e_step["loss"][1], r_step["loss"][1]) < 1e-6  # was 4.7e-2 and 6.0e-2
    worst, reason = reference_disagreement(eager, reference, rel_tol=1e-3, abs_tol=1e-5)
    assert reason is None and worst < 1e-6


def test_reference_model_is_eagers_model_cast_not_drawn_again():
    """Same initial values and same data: every grad, param and buffer of iteration 0 agrees
    to fp32 rounding (a model built under a float64 default dtype draws other weights). The
    first Linear's bias grad is rounding noise around 0 (BatchNorm follows it): atol."""
    builder = builder_for("batch_at_call_time.py")
    eager = run_copy(builder, SETTINGS, 1)[0]
    reference = run_copy(builder, SETTINGS, 1, float64=True)[0]
    assert set(eager) == set(reference)
    for name, (kind, tensor) in eager.items():
        if tensor.is_floating_point():
            close = torch.allclose(tensor.double(), reference[name][1], rtol=1e-5, atol=1e-7)
            assert close, (name, kind)
        else:
            assert torch.equal(tensor, reference[name][1]), name  # num_batches_tracked


class NoisyInput(torch.nn.Module):
    """Adds noise drawn like its input (randn_like): float64 in the reference, other values."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(24, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x + 0.5 * torch.randn_like(x))


class NoisyBuilder:
    device = "cpu"
    group = None  # no rank's group (child/distributed.py)

    def build(self) -> StepParts:
        seed_everything(0)
        model = NoisyInput()
        data = torch.randn(32, 24, generator=torch.Generator().manual_seed(3))
        target = torch.randint(0, 5, (32,), generator=torch.Generator().manual_seed(4))
        return StepParts(
            model,
            torch.optim.SGD(model.parameters(), lr=0.1),
            lambda index: (data, target),
            lambda model, inputs: torch.nn.functional.cross_entropy(model(inputs[0]), inputs[1]),
        )


def test_a_reference_that_draws_other_random_numbers_is_discarded_and_says_why():
    eager = run_copy(NoisyBuilder(), SETTINGS, 2)
    reference = run_copy(NoisyBuilder(), SETTINGS, 2, float64=True)
    worst, reason = reference_disagreement(
        eager, reference, rel_tol=REFERENCE_LOSS_REL_TOL[None], abs_tol=1e-5
    )
    assert worst > REFERENCE_LOSS_REL_TOL[None]
    assert reason is not None and "did not compute the same step" in said(reason)
    assert "iteration 0" in said(reason)


def loss_only(*values: float) -> list:
    return [{"loss": ("loss", torch.tensor(v, dtype=torch.float64))} for v in values]


def test_disagreement_allows_rounding_and_names_the_first_bad_iteration():
    eager = loss_only(2.0, 1.5)
    assert reference_disagreement(
        eager, loss_only(2.0000001, 1.5000002), rel_tol=1e-3, abs_tol=1e-5
    ) == (pytest.approx(1.33e-7, rel=0.01), None)
    worst, reason = reference_disagreement(eager, loss_only(2.0, 1.6), rel_tol=1e-3, abs_tol=1e-5)
    assert worst == pytest.approx(0.1 / 1.6) and "iteration 1" in said(reason)
    _, nan_reason = reference_disagreement(
        eager, loss_only(float("nan"), 1.5), rel_tol=1e-3, abs_tol=1e-5
    )
    assert nan_reason is not None and "nan" in said(nan_reason)
    near_zero = reference_disagreement(loss_only(1e-9), loss_only(2e-9), rel_tol=1e-3, abs_tol=1e-5)
    assert near_zero[1] is None  # within tol / 10 absolute: a converged loss is not "50 % off"


def test_a_shared_reference_is_loaded_not_computed_again(tmp_path: Path, monkeypatch) -> None:
    """The step's eager process writes the float64 reference once; each variant's numerics
    loads it: no float64 copy runs in the variant (counted). The compiled copy is an eager
    one here (no compile in unit tests)."""
    from compilegate.child import numerics

    builder = builder_for("batch_at_call_time.py")
    settings = {**SETTINGS, "numerics": {"enabled": True, "steps": 2}}
    real_run_copy = numerics.run_copy
    float64_runs = []

    def counting_run_copy(builder, settings, steps, *, variant=None, float64=False, **kw):
        float64_runs.extend([steps] if float64 else [])
        return real_run_copy(builder, settings, steps, float64=float64, **kw)

    monkeypatch.setattr(numerics, "run_copy", counting_run_copy)
    path = str(tmp_path / "reference.pt")
    numerics.write_reference(builder, settings, path)
    assert float64_runs == [2]
    variant = {"id": "default", "compile_kwargs": {}, "compile_target": "model"}
    for _ in range(2):  # two variants
        result = numerics.check_numerics(builder, settings, variant, lambda phase, m: None, path)
        assert result["status"] == "pass" and result["reference"] == "float64"
        assert result["reference_from"] == "eager"
    assert float64_runs == [2], "the variants computed no reference of their own"
    own = numerics.check_numerics(builder, settings, variant, lambda phase, m: None, None)
    assert own["reference_from"] == "variant" and float64_runs == [2, 2]
    three_steps = {**settings, "numerics": {"enabled": True, "steps": 3}}
    assert numerics.load_reference(path, 3) is None  # another step count: not this reference
    assert numerics.check_numerics(builder, three_steps, variant, lambda phase, m: None, path)
