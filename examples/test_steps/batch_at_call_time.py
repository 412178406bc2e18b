"""A classifier whose batches are drawn when they are asked for, as a synthetic-data
benchmark or an on-the-fly augmentation pipeline draws them: `batch(i)` seeds its own
torch.Generator with i and samples 32 x 24 features, so iteration i always sees the same
data without a data set held in memory. Dropout and BatchNorm, as in real training.

The numerics check's float64 reference must see exactly these numbers (cast), not numbers
drawn again in float64: `torch.randn` draws different values per dtype from 16 elements on.

`make_step_with_compiled_error` is the same step with an error planted in the compiled
model only (its logits are scaled by 1.5: the loss moves by about 3 %): the check must catch it.
No compilegate import.
"""

import torch
from torch import nn

ROWS, FEATURES, CLASSES = 32, 24, 5

# torch.compiler.is_compiling is 2.3+; torch._dynamo.is_compiling is the older spelling.
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
if _is_compiling is None:
    _is_compiling = torch._dynamo.is_compiling


class Classifier(nn.Module):
    def __init__(self, compiled_logit_scale=1.0):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(FEATURES, 64),
            nn.BatchNorm1d(64),
            nn.ReLU(),
            nn.Dropout(p=0.1),
            nn.Linear(64, CLASSES),
        )
        self.compiled_logit_scale = compiled_logit_scale

    def forward(self, x):
        logits = self.body(x)
        if self.compiled_logit_scale != 1.0 and _is_compiling():
            logits = logits * self.compiled_logit_scale  # the planted compiled-only error
        return logits


def draw_batch(index, device):
    """Iteration `index`'s batch: features and the labels a fixed linear teacher gives them."""
    generator = torch.Generator().manual_seed(1000 + index)
    x = torch.randn(ROWS, FEATURES, generator=generator)
    teacher = torch.randn(FEATURES, CLASSES, generator=torch.Generator().manual_seed(7))
    y = (x @ teacher).argmax(dim=1)
    return x.to(device), y.to(device)


def make_step(device="cpu", compiled_logit_scale=1.0):
    model = Classifier(compiled_logit_scale).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def batch(i):
        return draw_batch(i, device)

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}


def make_step_with_compiled_error(device="cpu"):
    return make_step(device, compiled_logit_scale=1.5)
