"""Where a measurement was taken: interpreter, torch, CUDA, GPU (child process)."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any


def describe_environment() -> dict[str, Any]:
    import torch

    cuda_available = torch.cuda.is_available()
    env: dict[str, Any] = {
        "torch": torch.__version__,
        "torch_git_version": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "cudnn": None,
        "device": "cuda" if cuda_available else "cpu",
        "gpu_name": None,
        "gpu_count": 0,
        "driver": None,
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine() or None,
        "cpu_count": os.cpu_count(),
        "torch_num_threads": torch.get_num_threads(),
    }
    if cuda_available:
        env["gpu_count"] = torch.cuda.device_count()
        env["gpu_name"] = torch.cuda.get_device_name(0)
        if torch.backends.cudnn.is_available():
            env["cudnn"] = str(torch.backends.cudnn.version())
    return env
