"""A training step on which torch.compile clearly pays off on a small CPU.

A deep, narrow residual MLP whose blocks are mostly element-wise work (LayerNorm, GELU,
SiLU, a gated and a Gaussian-weighted branch) on a 512-row batch: eager runs one kernel
per operation, forward and backward, each a pass over memory; Inductor fuses a block's
element-wise work into a few vectorised C++ loops. With `threads: 1` on this project's
idle 2-core runner: eager ~13-18 ms a step, compiled ~9-10 ms (~1.5×), a cold compile of
~25 s, so compiling pays after a few thousand steps. bench/decision_check.py checks
compilegate's break-even for it against real training runs.

examples/residual_mlp_step.py is its marginal cousin (~1.08× on the same machine).
compilegate calls `make_step(device=...)`; nothing here imports compilegate.
"""

import torch
from torch import nn

F = nn.functional


class Block(nn.Module):
    """One small matrix product and about fifteen element-wise operations."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.gate = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))
        self.scale = nn.Parameter(torch.full((width,), 0.5))

    def forward(self, x):
        h = self.norm(x)
        gated = torch.tanh(F.gelu(self.fc(h))) * torch.sigmoid(self.gate * h + self.bias)
        smooth = F.silu(gated * self.scale + h) * torch.exp(-0.5 * h * h)
        return x + self.scale * (gated + 0.1 * smooth)


class PointwiseMLP(nn.Module):
    def __init__(self, features, width, depth, classes):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        return self.out(self.blocks(torch.relu(self.inp(x))))


def build(device, *, features=32, width=64, depth=12, classes=10, batch=512):
    model = PointwiseMLP(features, width, depth, classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    generator = torch.Generator().manual_seed(11)
    xs = torch.randn(16, batch, features, generator=generator).to(device)
    ys = torch.randint(0, classes, (16, batch), generator=generator).to(device)

    def batch_at(i):
        return xs[i % 16], ys[i % 16]

    def loss(model, inputs):
        x, y = inputs
        return F.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch_at, "loss": loss}


def make_step(device="cpu"):
    return build(device)
