"""A step that imports a package beyond torch (`six`, from a requirements file installed into
the image at build time): it must run in the container, which has no network."""

import six  # noqa: F401  (the dependency under test)
from tiny_mlp import make_step as make_tiny_step


def make_step(device="cpu"):
    return make_tiny_step(device)
