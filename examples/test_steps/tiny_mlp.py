"""A tiny MLP step for the engine's own tests: seconds to compile with backend 'eager'."""

import torch
from torch import nn


def make_step(device="cpu"):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(0)
    xs = torch.randn(8, 16, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (8, 16), generator=generator).to(device)

    def batch(i):
        return xs[i % 8], ys[i % 8]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}


class StepObject:
    """The same step as an object with attributes instead of a dict."""

    def __init__(self, parts):
        for key, value in parts.items():
            setattr(self, key, value)


def make_step_object(device="cpu"):
    return StepObject(make_step(device))
