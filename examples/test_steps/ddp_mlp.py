"""A step for the distributed tests (config `distributed`): six 512-wide layers, 1 MiB of
parameters each, so DDP's gradient buckets (and Dynamo's split at their boundaries) follow
`bucket_cap_mb`. The factory builds a plain model; compilegate wraps it.

`make_step_item`: a `.item()` in forward, the user's graph break on every rank.
`make_step_rank_fails`: rank 1 raises on its second batch (after one whole step).
`make_step_rank_hangs`: rank 1 sleeps on its second batch: rank 0 waits in the all-reduce.
"""

import time

import torch
import torch.distributed as dist
from torch import nn

WIDTH, LAYERS, BATCH = 512, 6, 16


class Stack(nn.Module):
    def __init__(self, item=False):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS))
        self.item = item

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
            if self.item and float(x.mean().item()) > 1e9:  # never true: the break is the point
                x = x * 0
        return x


def _step(item=False, fails_on_rank=None, hangs_on_rank=None):
    model = Stack(item)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(4, BATCH, WIDTH, generator=torch.Generator().manual_seed(7))

    def batch(i):
        rank = dist.get_rank() if dist.is_initialized() else 0
        if fails_on_rank is not None and rank == fails_on_rank and i >= 1:
            raise RuntimeError(f"rank {rank} cannot read batch {i}")
        if hangs_on_rank is not None and rank == hangs_on_rank and i >= 1:
            time.sleep(3600)
        return data[i % 4]

    def loss(model, x):
        return model(x).square().mean()

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}


def make_step(device="cpu"):
    return _step()


def make_step_item(device="cpu"):
    return _step(item=True)


def make_step_rank_fails(device="cpu"):
    return _step(fails_on_rank=1)


def make_step_rank_hangs(device="cpu"):
    return _step(hangs_on_rank=1)
