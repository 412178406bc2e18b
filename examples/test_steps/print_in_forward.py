"""Two graph breaks outside loops, each in a different submodule: a `print` in a helper and
an explicit `torch._dynamo.graph_break()`. Dynamo splits forward into three graphs.

Used to cross-check compilegate's break sites against torch._dynamo.explain.
No compilegate import.
"""

import torch
from torch import nn


def show_stats(h):
    print("hidden shape", tuple(h.shape))  # GRAPH BREAK: print
    return h


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)

    def forward(self, x):
        return show_stats(torch.tanh(self.fc(x)))


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 4)

    def forward(self, h):
        h = torch.relu(h)
        torch._dynamo.graph_break()  # GRAPH BREAK: explicit
        return self.fc(h)


class PrintNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = Head()

    def forward(self, x):
        return self.head(self.encoder(x))


def make_step(device="cpu"):
    model = PrintNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(17)
    xs = torch.randn(4, 8, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (4, 8), generator=generator).to(device)

    def batch(i):
        return xs[i % 4], ys[i % 4]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
