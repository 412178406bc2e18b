"""Batches whose size changes: 4, 4, 8, 8, 16, 16, 32, 32, ... (index // 2 doubles it).

With the default automatic-dynamic shapes, the first new size recompiles `forward` once
(the size guard on x fails) and later sizes reuse the dynamic graph; with dynamic=True
nothing recompiles after the first compile. No compilegate import.
"""

import torch
from torch import nn


class SmallMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def batch_size(index):
    return 4 * 2 ** min(index // 2, 4)


def make_step(device="cpu"):
    model = SmallMLP().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(11)
    xs = torch.randn(64, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (64,), generator=generator).to(device)

    def batch(i):
        n = batch_size(i)
        return xs[:n].clone(), ys[:n].clone()

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
