"""A step whose compiled result differs from eager: `forward` branches on is_compiling().

A numerics check must fail on it and name the tensors that differ. No compilegate import.
"""

import torch
from classification import classification_step
from torch import nn

# torch.compiler.is_compiling is 2.3+; torch._dynamo.is_compiling is the older spelling.
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
if _is_compiling is None:
    _is_compiling = torch._dynamo.is_compiling


class SneakyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if _is_compiling():
            h = h * 1.05  # only the compiled model scales its activations
        return self.fc2(h)


def make_step(device="cpu"):
    return classification_step(
        SneakyNet(),
        device,
        seed=13,
        batches=4,
        rows=8,
        features=16,
        classes=4,
    )
