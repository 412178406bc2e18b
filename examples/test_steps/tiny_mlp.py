"""A tiny MLP step for the engine's own tests: seconds to compile with backend 'eager'."""

from classification import classification_step
from torch import nn


def make_step(device="cpu"):
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    return classification_step(model, device, seed=0, batches=8, rows=16, features=16, classes=4)


class StepObject:
    """The same step as an object with attributes instead of a dict."""

    def __init__(self, parts):
        for key, value in parts.items():
            setattr(self, key, value)


def make_step_object(device="cpu"):
    return StepObject(make_step(device))
