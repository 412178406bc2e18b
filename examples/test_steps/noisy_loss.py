"""Random numbers drawn in the loss, outside the model: a label-noise-style jitter added to the
logits by the loss function. The model itself draws nothing, so a compiled model has no random
op: numerics checks it with the code the timed compile produced, without compiling it again,
both sides drawing the loss's noise from the same seed. `make_step_differs`: the same, and a
compiled-only 1.05 scale in the model's forward, which numerics must still catch. No
compilegate import.
"""

import torch
from torch import nn

_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
if _is_compiling is None:
    _is_compiling = torch._dynamo.is_compiling


class Net(nn.Module):
    def __init__(self, sneaky=False):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)
        self.sneaky = sneaky

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.sneaky and _is_compiling():
            h = h * 1.05  # only the compiled model scales its activations
        return self.fc2(h)


def _step(device, sneaky):
    model = Net(sneaky).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(7)
    xs = torch.randn(4, 8, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (4, 8), generator=generator).to(device)

    def batch(i):
        return xs[i % 4], ys[i % 4]

    def loss(model, inputs):
        x, y = inputs
        logits = model(x)
        jitter = 0.01 * torch.randn_like(logits)  # drawn here, outside the model
        return nn.functional.cross_entropy(logits + jitter, y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}


def make_step(device="cpu"):
    return _step(device, sneaky=False)


def make_step_differs(device="cpu"):
    return _step(device, sneaky=True)
