"""A correct fp32 MLP with LayerNorm and AdamW: compiled numerics must match eager.

No compilegate import.
"""

import torch
from torch import nn


def make_step(device="cpu"):
    model = nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 10)).to(
        device
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(5)
    xs = torch.randn(4, 16, 32, generator=generator).to(device)
    ys = torch.randint(0, 10, (4, 16), generator=generator).to(device)

    def batch(i):
        return xs[i % 4], ys[i % 4]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
