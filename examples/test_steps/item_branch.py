"""A forward with two graph breaks: a `.item()` read and a branch on a tensor's value.

Used by compilegate's integration tests: both break sites must be reported at the lines
marked below. The `.item()` reads a constant buffer, so on torch <= 2.5 (which specializes
Python floats) it does not also recompile at every step. No compilegate import.
"""

import torch
from classification import classification_step
from torch import nn


class ItemBranchNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)
        self.register_buffer("temperature", torch.tensor(2.0))

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        scale = self.temperature.item()  # GRAPH BREAK: item
        h = h / scale
        if h.sum() > 0:  # GRAPH BREAK: branch
            h = h * 0.5
        return self.fc2(h)


def make_step(device="cpu"):
    return classification_step(
        ItemBranchNet(),
        device,
        seed=7,
        batches=8,
        rows=8,
        features=16,
        classes=4,
    )
