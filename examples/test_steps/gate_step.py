"""A small step with regressions that can be planted from the environment (gate tests, bench).

COMPILEGATE_PLANT_PRODUCTS=N        extra work only while compiling: a chain of N small
                                    products of the hidden state, traced into the compiled
                                    graph, forward only (a compiled-only slowdown linear in
                                    N; eager is untouched)
COMPILEGATE_PLANT=graph_break       a new graph break in forward (torch._dynamo.graph_break())
COMPILEGATE_PLANT=recompile         from iteration 8 on, batches have 8 more rows
COMPILEGATE_PLANT=numerics          compiled forward scales its output by 1.05
COMPILEGATE_GATE_WIDTH, _ROWS        hidden width and batch rows (default 128 and 16; the gate
                                    power bench uses a bigger step, see bench/gate_power.py)

The measuring child sees only an allow-listed environment: a config measuring this step
lists the ones it sets, e.g. `env: [COMPILEGATE_PLANT]`.
"""

import os

import torch
from torch import nn

PLANT = os.environ.get("COMPILEGATE_PLANT", "")
PLANT_PRODUCTS = int(os.environ.get("COMPILEGATE_PLANT_PRODUCTS", "0"))
PLANT_SLICE = 64
WIDTH = int(os.environ.get("COMPILEGATE_GATE_WIDTH", "128"))
ROWS = int(os.environ.get("COMPILEGATE_GATE_ROWS", "16"))


def _is_compiling():
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling()
    return torch._dynamo.is_compiling()


class GateModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, WIDTH)
        self.hidden = nn.Linear(WIDTH, WIDTH)
        self.out = nn.Linear(WIDTH, 8)
        self.register_buffer("mixer", torch.eye(WIDTH))

    def forward(self, x):
        h = torch.relu(self.inp(x))
        if PLANT_PRODUCTS and _is_compiling():
            # Detached and with an identity mixer: no gradient chain (whose values would
            # shrink into slow subnormal floats) and values that stay in range.
            extra = h.detach()[:, :PLANT_SLICE]
            for _ in range(PLANT_PRODUCTS):
                extra = torch.tanh(extra @ self.mixer[:PLANT_SLICE, :PLANT_SLICE])
            h = h + 1e-30 * extra.sum()
        if PLANT == "graph_break":
            torch._dynamo.graph_break()
        h = torch.relu(self.hidden(h))
        out = self.out(h)
        if PLANT == "numerics" and _is_compiling():
            out = out * 1.05
        return out


def make_step(device="cpu"):
    model = GateModel().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(0)
    xs = torch.randn(4, ROWS + 8, 32, generator=generator).to(device)
    ys = torch.randint(0, 8, (4, ROWS + 8), generator=generator).to(device)

    def batch(i):
        rows = ROWS + 8 if PLANT == "recompile" and i >= 8 else ROWS
        return xs[i % 4, :rows], ys[i % 4, :rows]

    def loss(model, inputs):
        x, y = inputs
        return nn.functional.cross_entropy(model(x), y)

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
