"""A factory that changes torch's process-wide settings, as user code may: one intra-op
thread. The yardstick must not feel it; the result must name it. No compilegate import."""

import torch
from tiny_mlp import make_step as tiny_step


def make_step(device="cpu"):
    torch.set_num_threads(1)
    return tiny_step(device)
