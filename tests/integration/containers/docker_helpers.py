"""Shared by the Docker tests: the local torch, a tiny config."""

from __future__ import annotations

import os
from pathlib import Path

LOCAL_TORCH = os.environ.get("COMPILEGATE_DOCKER_TORCH", "2.13.0")


def write_tiny_config(
    folder: Path,
    *,
    name: str = "tiny_mlp",
    entry: str = "examples/test_steps/tiny_mlp.py:make_step",
    extra: str = "",
    variants: str = "[{mode: default}]",
) -> Path:
    """A config outside the repository for a tiny step: one compiled variant, few
    iterations, no numerics — a cold compile of a tiny model is what a run costs. `extra`:
    more step settings, as YAML lines; `variants`: `[{backend: eager}]` where what is
    tested is not the compile (Dynamo alone: about 15 s less per run in a container)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "compilegate.yml"
    config.write_text(
        "version: 1\n"
        "steps:\n"
        f"  - name: {name}\n"
        f"    entry: {entry}\n"
        "    device: cpu\n"
        f"    variants: {variants}\n"
        "    warmup: 2\n"
        "    iterations: 6\n"
        "    rounds: 2\n"
        "    threads: 1\n"
        "    eager_processes: 2\n"
        "    variant_processes: 1\n"
        "    timeout_s: 300\n"
        "    numerics: {enabled: false}\n" + extra
    )
    return config
