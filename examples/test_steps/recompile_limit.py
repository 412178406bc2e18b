"""A step that hits Dynamo's recompile limit: the batch size changes every two steps and
the factory lowers the limit to 2 (as a user might, to fail fast on recompiles).

Run it with `dynamic: false`: sizes 4, 8 compile, size 16 would be the third compile of
`forward`, so torch gives up and runs that frame eagerly from then on. No compilegate import.
"""

import torch
from torch import nn

RECOMPILE_LIMIT = 2


class SmallMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def make_step(device="cpu"):
    config = torch._dynamo.config
    for name in ("recompile_limit", "cache_size_limit"):  # recompile_limit is the 2.7+ name
        if hasattr(config, name):
            setattr(config, name, RECOMPILE_LIMIT)
    model = SmallMLP().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(19)
    xs = torch.randn(64, 16, generator=generator).to(device)
    ys = torch.randint(0, 4, (64,), generator=generator).to(device)

    def batch(i):
        n = 4 * 2 ** min(i // 2, 4)
        return xs[:n].clone(), ys[:n].clone()

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
