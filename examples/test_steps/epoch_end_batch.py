"""An epoch of 100 batches whose last one is smaller, as a DataLoader with drop_last=False
gives: 16 rows at every index except 99, 199, ... (7 rows). The default automatic-dynamic
shapes recompile `forward` at the first such batch. No compilegate import."""

import torch
from torch import nn

EPOCH = 100
ROWS, LAST_ROWS = 16, 7


def make_step(device="cpu"):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(5)
    xs = torch.randn(8, ROWS, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (8, ROWS), generator=generator).to(device)

    def batch(i):
        rows = LAST_ROWS if i % EPOCH == EPOCH - 1 else ROWS
        return xs[i % 8, :rows], ys[i % 8, :rows]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
