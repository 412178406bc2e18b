"""The compiled region's size (child/compile_size.py): ATen ops of one eager call, counted
on real torch without compiling."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from compilegate.child.compile_size import count_eager_ops  # noqa: E402
from compilegate.child.training import TrainingStep  # noqa: E402
from compilegate.child.user_code import StepParts  # noqa: E402


def mlp_step(layers: int) -> TrainingStep:
    torch.manual_seed(0)
    blocks = [torch.nn.Linear(8, 8) if i % 2 == 0 else torch.nn.ReLU() for i in range(2 * layers)]
    model = torch.nn.Sequential(*blocks)
    xs = torch.randn(4, 8)

    def loss(model, inputs):
        return model(inputs).square().mean()

    parts = StepParts(
        model=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        batch=lambda index: xs,
        loss=loss,
    )
    return TrainingStep(parts, device="cpu")


def test_a_bigger_model_counts_more_ops_and_the_weights_stay():
    small, big = mlp_step(2), mlp_step(3)
    before = [p.detach().clone() for p in small.parts.model.parameters()]
    counted = count_eager_ops(small, 0, "model")
    assert counted is not None and counted > 0
    assert count_eager_ops(big, 0, "model") > counted
    assert all(torch.equal(a, b) for a, b in zip(before, small.parts.model.parameters()))
    assert all(p.grad is None for p in small.parts.model.parameters())  # no backward ran


def test_the_model_target_counts_the_models_call_only():
    """compile: model compiles the model, not the loss around it: its ops are left out."""
    step = mlp_step(2)
    model_only = count_eager_ops(step, 0, "model")
    with_loss = count_eager_ops(step, 0, "step")
    assert model_only is not None and with_loss is not None
    assert with_loss > model_only


def test_a_step_the_count_cannot_run_has_no_size():
    step = mlp_step(1)
    step.parts.batch = lambda index: (_ for _ in ()).throw(RuntimeError("no data"))
    assert count_eager_ops(step, 0, "model") is None
