"""A small step with regressions that can be planted from the environment (gate tests, bench).

COMPILEGATE_PLANT_EAGER_MS=X        every eager iteration waits X ms more (a busy-wait in the
                                    loss, which runs outside the compiled model): an
                                    eager-only slowdown of exactly X ms; compiled untouched
COMPILEGATE_PLANT_COMPILED_MS=X     the same, only when the model is compiled (compile:
                                    model, the default); eager untouched
COMPILEGATE_PLANT=graph_break       a new graph break in forward (torch._dynamo.graph_break())
COMPILEGATE_PLANT=recompile         from iteration 8 on, batches have 8 more rows
COMPILEGATE_PLANT=numerics          compiled forward scales its output by 1.05
COMPILEGATE_PLANT=compile_only      300 more element-wise ops on the logits, traced only while
                                    compiling: more graph to compile (FX nodes, guards, code),
                                    one fused kernel over 512 numbers more to run
COMPILEGATE_PLANT=extra_layer     one more hidden layer (Linear + ReLU): an intended change
                                    that compiles into more FX nodes and guards, in proportion
COMPILEGATE_PLANT=item              a `.item()` of the loss in every loss call (outside the
                                    compiled model): one more host-device sync per step
COMPILEGATE_PLANT=matmul            a redundant matmul in every loss call: the batch times a
                                    32 x 5*WIDTH matrix, its result added times 0 (about 10 %
                                    of the step's FLOPs at the gate power bench's size)
COMPILEGATE_PLANT=clone             one extra .clone() of the hidden activations in forward
                                    (Inductor removes it from compiled code: eager's work)
COMPILEGATE_PLANT=optimizer         the optimizer steps twice per iteration
COMPILEGATE_PLANT_MOST_MS=X         9 loss calls in 10 wait X ms more (a busy-wait), eager and
                                    compiled alike: most iterations slower, the fastest not
COMPILEGATE_GATE_WIDTH, _ROWS        hidden width and batch rows (default 128 and 16; the gate
                                    power bench uses a bigger step, see bench/gate_power.py)

The measuring child sees only an allow-listed environment: a config measuring this step
lists the ones it sets, e.g. `env: [COMPILEGATE_PLANT]`.
"""

import os
import time

import torch
from torch import nn

PLANT = os.environ.get("COMPILEGATE_PLANT", "")
PLANT_EAGER_MS = float(os.environ.get("COMPILEGATE_PLANT_EAGER_MS", "0"))
PLANT_COMPILED_MS = float(os.environ.get("COMPILEGATE_PLANT_COMPILED_MS", "0"))
PLANT_MOST_MS = float(os.environ.get("COMPILEGATE_PLANT_MOST_MS", "0"))
COMPILE_ONLY_OPS = 300
WIDTH = int(os.environ.get("COMPILEGATE_GATE_WIDTH", "128"))
ROWS = int(os.environ.get("COMPILEGATE_GATE_ROWS", "16"))


def _is_compiling():
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling"):
        return compiler.is_compiling()
    return torch._dynamo.is_compiling()


def _is_compiled(model):
    """torch.compile(model) hands the loss an OptimizedModule (2.0 and later)."""
    return isinstance(model, torch._dynamo.eval_frame.OptimizedModule)


def _busy_wait(ms):
    """Wait by the wall clock, spinning: a preemption during the wait does not lengthen it,
    so the step's fastest iteration grows by exactly `ms`."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


class GateModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(32, WIDTH)
        self.hidden = nn.Linear(WIDTH, WIDTH)
        self.extra = nn.Linear(WIDTH, WIDTH) if PLANT == "extra_layer" else None
        self.out = nn.Linear(WIDTH, 8)

    def forward(self, x):
        h = torch.relu(self.inp(x))
        if PLANT == "graph_break":
            torch._dynamo.graph_break()
        h = torch.relu(self.hidden(h))
        if PLANT == "clone":
            h = h.clone()
        if self.extra is not None:
            h = torch.relu(self.extra(h))
        out = self.out(h)
        if PLANT == "numerics" and _is_compiling():
            out = out * 1.05
        if PLANT == "compile_only" and _is_compiling():
            for index in range(COMPILE_ONLY_OPS):
                # Not x*1 or x+0, which Inductor removes: each op stays in the graph.
                out = out * 0.999 + 0.001 * (index % 3)
        return out


def _twice(step):
    def stepped_twice(*args, **kwargs):
        step(*args, **kwargs)
        return step(*args, **kwargs)

    return stepped_twice


def make_step(device="cpu"):
    model = GateModel().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if PLANT == "optimizer":
        optimizer.step = _twice(optimizer.step)
    generator = torch.Generator().manual_seed(0)
    redundant = torch.randn(32, 5 * WIDTH, generator=generator).to(device)
    xs = torch.randn(4, ROWS + 8, 32, generator=generator).to(device)
    ys = torch.randint(0, 8, (4, ROWS + 8), generator=generator).to(device)

    def batch(i):
        rows = ROWS + 8 if PLANT == "recompile" and i >= 8 else ROWS
        return xs[i % 4, :rows], ys[i % 4, :rows]

    calls = [0]

    def loss(model, inputs):
        wait_ms = PLANT_COMPILED_MS if _is_compiled(model) else PLANT_EAGER_MS
        calls[0] += 1
        if PLANT_MOST_MS and calls[0] % 10:
            wait_ms += PLANT_MOST_MS
        if wait_ms:
            _busy_wait(wait_ms)
        x, y = inputs
        loss = nn.functional.cross_entropy(model(x), y)
        if PLANT == "matmul":
            loss = loss + 0.0 * (x @ redundant).sum()
        if PLANT == "item":
            loss.detach().item()
        return loss

    return {"model": model, "optimizer": optimizer, "batch": batch, "loss": loss}
