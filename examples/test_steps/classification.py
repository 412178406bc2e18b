"""The training-step plumbing the small test steps share: a fixed synthetic classification
data set, cross-entropy, SGD unless told otherwise. Step files import it as a sibling module,
as a user's step file would import its own helpers."""

import torch
from torch import nn


def classification_step(
    model, device, *, seed, batches, rows, features, classes, make_optimizer=None
):
    model = model.to(device)
    if make_optimizer is None:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    else:
        optimizer = make_optimizer(model.parameters())
    generator = torch.Generator().manual_seed(seed)
    xs = torch.randn(batches, rows, features, generator=generator).to(device)
    ys = torch.randint(0, classes, (batches, rows), generator=generator).to(device)

    def batch(i):
        return xs[i % batches], ys[i % batches]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
