"""Where a measurement was taken: interpreter, torch, CUDA, driver, GPU, CPU model, timer."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any


def describe_environment() -> dict[str, Any]:
    import torch

    from .timing import timer_for

    cuda_available = torch.cuda.is_available()
    device = "cuda" if cuda_available else "cpu"
    env: dict[str, Any] = {
        "torch": torch.__version__,
        "torch_git_version": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "cudnn": None,
        "device": device,
        "gpu_name": None,
        "gpu_count": 0,
        "driver": None,
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine() or None,
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_num_threads": torch.get_num_threads(),
        "timer": timer_for(device).name,
    }
    if cuda_available:
        env["gpu_count"] = torch.cuda.device_count()
        env["gpu_name"] = torch.cuda.get_device_name(0)
        env["driver"] = nvidia_driver_version()
        if torch.backends.cudnn.is_available():
            env["cudnn"] = str(torch.backends.cudnn.version())
    return env


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name (`platform.processor()` is only `x86_64` on Linux)."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def nvidia_driver_version() -> str | None:
    """The NVIDIA driver version from nvidia-smi, or None where it is not installed."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader,nounits", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    version = done.stdout.strip().splitlines()[0].strip() if done.stdout.strip() else ""
    return version or None if done.returncode == 0 else None
