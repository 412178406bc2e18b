"""Dropout, and a compiled result that differs from eager: `forward` scales its activations
only while compiling (as compiled_differs.py does, here next to a dropout).

The numerics check must compare both sides on the same dropout masks and still fail, naming
the tensors that differ. No compilegate import.
"""

import torch
from torch import nn

_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
if _is_compiling is None:
    _is_compiling = torch._dynamo.is_compiling


class DropoutSneakyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.drop = nn.Dropout(p=0.2)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        h = self.drop(torch.relu(self.fc1(x)))
        if _is_compiling():
            h = h * 1.05  # only the compiled model scales its activations
        return self.fc2(h)


def make_step(device="cpu"):
    model = DropoutSneakyNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(5)
    xs = torch.randn(4, 8, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (4, 8), generator=generator).to(device)

    def batch(i):
        return xs[i % 4], ys[i % 4]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
