"""A correct fp32 MLP with LayerNorm and AdamW: compiled numerics must match eager.

No compilegate import.
"""

import torch
from classification import classification_step
from torch import nn


def make_step(device="cpu"):
    return classification_step(
        nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 10)),
        device,
        seed=5,
        batches=4,
        rows=16,
        features=32,
        classes=10,
        make_optimizer=lambda params: torch.optim.AdamW(params, lr=1e-3),
    )
