"""Broken step factories: each is a mistake a user makes; compilegate must say so in one line."""

import os
import time

import torch
from tiny_mlp import make_step as make_good_step


def make_raising(device="cpu"):
    raise ValueError("dataset path /data/missing not found")


def make_missing_loss(device="cpu"):
    parts = make_good_step(device)
    del parts["loss"]
    return parts


def make_vector_loss(device="cpu"):
    parts = make_good_step(device)
    parts["loss"] = lambda model, inputs: model(inputs[0]).sum(dim=1)
    return parts


def make_nan_loss(device="cpu"):
    parts = make_good_step(device)
    parts["loss"] = lambda model, inputs: model(inputs[0]).sum() * float("nan")
    return parts


def make_aborting(device="cpu"):
    os.abort()


def make_sleeping(device="cpu"):
    time.sleep(120)
    return make_good_step(device)


def make_cuda_only(device="cpu"):
    return make_good_step("cuda")


NOT_A_FUNCTION = torch.zeros(1)
