"""Integration fixtures."""

from __future__ import annotations

import subprocess

import pytest
from cli_helpers import TORCH_PYTHON


@pytest.fixture(scope="session")
def torch_python() -> str:
    check = subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True, check=False)
    if check.returncode != 0:
        pytest.skip(f"{TORCH_PYTHON} cannot import torch")
    return TORCH_PYTHON
