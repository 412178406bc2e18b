"""Portable compile-cache artifacts: the lever a cluster job pulls when CI ships them.

`torch.compiler.save_cache_artifacts()` (torch 2.7+) returns one blob of everything this
process compiled (Inductor's FX graphs, AOTAutograd, Triton kernels, autotuning, PGO) for the
same torch, Triton and device; `torch.compiler.load_cache_artifacts(blob)` in a fresh process
puts it into that process's caches before it compiles. A variant's first process saves the
blob beside its Inductor cache (FILE_NAME under $TORCHINDUCTOR_CACHE_DIR); the parent copies it
into an empty cache directory and starts one later process that loads it inside its compile
window (run/step_measurement.py), so that process's compile seconds are what a job that starts
from the artifacts pays.

A torch without the API, or one whose save returns nothing, leaves no blob: the record says
why (`absent`), and the parent runs that process as an ordinary warm one. Python 3.8,
stdlib and torch only (the child's rule).
"""

from __future__ import annotations

import os
import time
from typing import Any

from .protocol import CACHE_ARTIFACTS_FILE as FILE_NAME


def artifacts_path() -> str | None:
    """Where this process's blob lives: beside its Inductor cache (None: no cache set)."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return os.path.join(cache, FILE_NAME) if cache else None


def _api(name: str) -> Any:
    import torch

    compiler = getattr(torch, "compiler", None)
    return getattr(compiler, name, None) if compiler is not None else None


def save() -> dict[str, Any]:
    """After the process compiled everything: the blob written, and its size and seconds;
    or {"absent": code} (report/absence_words.py words it), with the torch that lacks the
    API (`torch`) where it is torch's."""
    import torch

    save_api, path = _api("save_cache_artifacts"), artifacts_path()
    if save_api is None:
        return {"absent": "no_save_cache_artifacts", "torch": torch.__version__}
    if path is None:
        return {"absent": "no_inductor_cache_dir"}
    started = time.perf_counter()
    saved = save_api()
    if not saved:
        return {"absent": "saved_nothing"}
    blob = saved[0]
    with open(path, "wb") as out:
        out.write(blob)
    return {"saved_bytes": len(blob), "save_s": time.perf_counter() - started}


def load() -> dict[str, Any]:
    """Before the compile, inside its window: the blob loaded into this process's empty
    caches; its size and seconds. Raises when there is none (the parent gave it one)."""
    path, load_api = artifacts_path(), _api("load_cache_artifacts")
    if path is None or load_api is None or not os.path.isfile(path):
        raise RuntimeError(f"cache artifacts: nothing to load ({path or 'no cache dir'})")
    started = time.perf_counter()
    with open(path, "rb") as blob:
        data = blob.read()
    load_api(data)
    return {"loaded_bytes": len(data), "load_s": time.perf_counter() - started}
