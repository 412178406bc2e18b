"""Two graph breaks outside loops, each in a different submodule: a `print` in a helper and
an explicit `torch._dynamo.graph_break()`. Dynamo splits forward into three graphs. The
print's graph is cut in Encoder.forward, where it calls the helper (GRAPH SPLIT): the site
is there, the cause at the print.

Used to cross-check compilegate's break sites against torch._dynamo.explain.
No compilegate import.
"""

import torch
from classification import classification_step
from torch import nn


def show_stats(h):
    print("hidden shape", tuple(h.shape))  # GRAPH BREAK: print
    return h


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)

    def forward(self, x):
        return show_stats(torch.tanh(self.fc(x)))  # GRAPH SPLIT: print


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
    return classification_step(
        PrintNet(),
        device,
        seed=17,
        batches=4,
        rows=8,
        features=16,
        classes=4,
    )
