"""A residual MLP training step on which torch.compile barely pays off on a small CPU.

Narrow layers and many element-wise operations per block (LayerNorm, GELU, a scaled
residual): eager runs one kernel per operation, forward and backward; Inductor fuses each
block's element-wise work into a few C++ loops, but the matrix products dominate.
`make_step`, with `threads: 1`, takes ~15-50 ms a step on a 2-core runner. There
compilegate measured 1.06-1.13x by mean step time and a break-even after 14,000-32,000
steps; eager and compiled training runs side by side crossed at 26,141
(bench/decision_check.py --concurrent). A marginal step: compilegate says "stay eager"
or "undecided" for a 10,000-step run, never "compile". examples/pointwise_mlp_step.py is
the one where compiling clearly pays.

compilegate calls `make_step(device=...)`; nothing here imports compilegate.
"""

import torch
from torch import nn


class Block(nn.Module):
    """x + scale · tanh(fc(norm(x))) · sigmoid(gate · norm(x) + bias): one small matrix
    product and a dozen element-wise operations, forward and backward."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.gate = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))
        self.scale = nn.Parameter(torch.full((width,), 0.5))

    def forward(self, x):
        h = self.norm(x)
        u = nn.functional.gelu(self.fc(h))
        return x + self.scale * torch.tanh(u) * torch.sigmoid(self.gate * h + self.bias)


class ResidualMLP(nn.Module):
    def __init__(self, features, width, depth, classes):
        super().__init__()
        self.inp = nn.Linear(features, width)
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        return self.out(self.blocks(torch.relu(self.inp(x))))


def build(device, *, features=32, width=256, depth=8, classes=10, batch=128):
    model = ResidualMLP(features, width, depth, classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    generator = torch.Generator().manual_seed(7)
    xs = torch.randn(16, batch, features, generator=generator).to(device)
    ys = torch.randint(0, classes, (16, batch), generator=generator).to(device)

    def batch_at(i):
        return xs[i % 16], ys[i % 16]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch_at, "loss": loss}


def make_step(device="cpu"):
    return build(device)
