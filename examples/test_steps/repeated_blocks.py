"""A tiny step whose model repeats one block (an nn.ModuleList of two identical blocks, as a
transformer's layers): what regional compilation compiles once and reuses."""

from classification import classification_step
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + self.norm(self.linear(x)).relu()


class Blocks(nn.Module):
    def __init__(self, features=16, width=32, classes=4):
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(2))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def make_step(device="cpu"):
    return classification_step(Blocks(), device, seed=0, batches=8, rows=16, features=16, classes=4)
