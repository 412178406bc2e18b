"""A `print` inside the layer loop of forward: Dynamo skips the whole forward frame.

A graph break inside a for-loop cannot be resumed mid-loop, so torch.compile falls back to
eager for `forward` and compiles only the blocks it calls. compilegate must report that
fallback. No compilegate import.
"""

import torch
from classification import classification_step
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x)) + x


class LoopNet(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        for index, block in enumerate(self.blocks):
            x = block(x)
            print("block", index, "done")  # GRAPH BREAK: print in loop
        return self.head(x)


def make_step(device="cpu"):
    return classification_step(
        LoopNet(),
        device,
        seed=3,
        batches=8,
        rows=8,
        features=16,
        classes=4,
    )
