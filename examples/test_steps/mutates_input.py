"""The tiny MLP whose forward updates its input in place (by one: the values stay), as a pull
request might plant: under reduce-overhead on a GPU Inductor then runs the graph without its
CUDA graph ("mutated inputs"), and only a slower step would say so (issue 55; tests/gpu)."""

from classification import classification_step
from torch import nn


class ScalesItsInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        x.mul_(1.0)  # CUDA GRAPHS SKIPPED: an in-place update of the input
        return self.net(x)


def make_step(device="cpu"):
    model = ScalesItsInput()
    return classification_step(model, device, seed=0, batches=8, rows=16, features=16, classes=4)
