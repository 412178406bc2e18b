"""An MLP with dropout in training mode, and a BatchNorm (buffers that change each step).

Compiled dropout draws its own masks unless Inductor's fallback_random is set; a numerics
check that forgets it reports a false failure. No compilegate import.
"""

import torch
from torch import nn


def make_step(device="cpu"):
    model = nn.Sequential(
        nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Dropout(p=0.2), nn.Linear(64, 10)
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(9)
    xs = torch.randn(4, 16, 32, generator=generator).to(device)
    ys = torch.randint(0, 10, (4, 16), generator=generator).to(device)

    def batch(i):
        return {"x": xs[i % 4], "y": ys[i % 4]}

    def loss(model, inputs):
        return nn.functional.cross_entropy(model(inputs["x"]), inputs["y"])

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
