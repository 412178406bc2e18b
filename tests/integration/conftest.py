"""Integration fixtures."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import OLD_TORCH_PYTHON, REPO_ROOT, TORCH_PYTHON, write_config

# --- Compile diagnostics: one real run per PyTorch version, shared by test_diagnostics.py and
# test_explain_crosscheck.py. The old version's environment lives outside the repository
# (`make old-torch-env`); without it the old-torch half is skipped, loudly.


# Tiny steps, short schedules: warm-up 2 (the compile), 4 timed iterations in 2 rounds.
# Numerics only where it is the point (each check compiles the step once more).
# name: (file[:factory], variants, numerics)
DIAGNOSTICS_STEPS = {
    # Through Inductor, as users compile: the graph-break sites of a model compile and of a
    # whole-step compile (whose optimizer.step has torch's own breaks).
    "item_branch": ("item_branch.py", "[{mode: default}, {mode: default, compile: step}]", False),
    # Dynamo alone (backend eager): a frame skipped in a loop, a graph split by a helper, a
    # recompile on a new batch size, the recompile limit: all Dynamo's doing and its logs,
    # the same under Inductor (item_branch above, the numerics steps below and
    # test_epoch_end.py's late recompile go through Inductor). Inductor's
    # compiles of these four steps were 24 s of the current torch's run alone and 62 s of
    # 2.4's (its compile is 2-3 times slower here).
    "print_in_loop": ("print_in_loop.py", "[{backend: eager}]", False),
    "print_in_forward": ("print_in_forward.py", "[{backend: eager}]", False),
    "growing_batch": (
        "growing_batch.py",
        "[{backend: eager}, {backend: eager, dynamic: true}]",
        False,
    ),
    "recompile_limit": ("recompile_limit.py", "[{backend: eager, dynamic: false}]", False),
    "fp32_mlp": ("fp32_mlp.py", "[{mode: default}]", True),
    "dropout_mlp": ("dropout_mlp.py", "[{mode: default}]", True),
    "compiled_differs": ("compiled_differs.py", "[{mode: default}]", True),
    "batch_at_call_time": (
        "batch_at_call_time.py:make_step_with_compiled_error",
        "[{mode: default}]",
        True,
    ),
    # Dynamo alone (backend eager): what is asserted of GPT-2, the one break inside the
    # library and its site, is Dynamo's doing, as torch._dynamo.explain's (Inductor's compile
    # of it was 23 s of the run's 181 s; the other steps' breaks go through Inductor).
    "hf_gpt2": ("hf_gpt2.py", "[{backend: eager}]", False),
    # Issue 55: reduce-overhead on a CPU, where Inductor skips the CUDA graphs (the one
    # compile of this mode in the integration tests).
    "cuda_graphs_on_cpu": ("tiny_mlp.py", "[{mode: reduce-overhead}]", False),
}
# A step's own warm-up where 2 is too few (reduce-overhead needs MIN_WARMUP_REDUCE_OVERHEAD).
STEP_WARMUP = {"cuda_graphs_on_cpu": 5}
# Steps that need a library the measuring interpreter may lack: measured only where it imports.
STEP_NEEDS = {"hf_gpt2": "transformers"}


@dataclass
class DiagnosticsRun:
    python: str
    document: dict[str, Any]
    table: str
    child_output: str
    wall_s: float
    skipped: dict[str, str]  # step -> why this interpreter did not measure it

    def variant(self, step: str, variant_id: str | None = None) -> dict[str, Any]:
        """The step's variant of that id (None: its first)."""
        if step in self.skipped:
            pytest.skip(self.skipped[step])
        found = next(s for s in self.document["steps"] if s["name"] == step)
        assert found["status"] == "ok", found["error"]
        chosen = next(v for v in found["variants"] if variant_id in (None, v["id"]))
        assert chosen["status"] == "ok", chosen["error"]
        return chosen


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("current", id="torch-current"),
        pytest.param("old", id="torch-old", marks=pytest.mark.old_torch),
    ],
)
def measuring_python(request: pytest.FixtureRequest) -> str:
    """The venv's torch, then an old one (<= 2.5) through `--python`."""
    python = TORCH_PYTHON if request.param == "current" else OLD_TORCH_PYTHON
    if not Path(python).exists():
        pytest.skip(
            f"OLD TORCH NOT TESTED: no interpreter at {python} (run `make old-torch-env` "
            "or set COMPILEGATE_OLD_PYTHON)"
        )
    check = subprocess.run([python, "-c", "import torch"], capture_output=True, check=False)
    if check.returncode != 0:
        pytest.skip(
            f"TORCH NOT TESTED: {python} cannot import torch: "
            f"{check.stderr.decode(errors='replace')[-300:]}"
        )
    return python


@pytest.fixture(scope="session")
def diagnostics_run(measuring_python: str, tmp_path_factory: pytest.TempPathFactory):
    """Every diagnostics step through the real runner, one Inductor cache per interpreter."""
    from compilegate.config.loading import load_config_file
    from compilegate.report.run_text import render_run_text
    from compilegate.results.model import parse
    from compilegate.run.orchestrate import RunOptions, run_config

    tmp = tmp_path_factory.mktemp("diagnostics")
    skipped = missing_libraries(measuring_python)
    body = "".join(
        f"  - name: {name}\n    entry: examples/test_steps/{entry_spec(file)}\n"
        f"    variants: {variants}\n    warmup: {STEP_WARMUP.get(name, 2)}\n"
        "    iterations: 4\n    rounds: 2\n"
        "    variant_processes: 1\n"
        f"    numerics: {{enabled: {'true' if numerics else 'false'}, steps: 2}}\n"
        for name, (file, variants, numerics) in DIAGNOSTICS_STEPS.items()
        if name not in skipped
    )
    config_path = write_config(tmp / "compilegate.yml", body)
    stream = io.StringIO()
    options = RunOptions(
        out_path=tmp / "result.json",
        python=measuring_python,
        inductor_cache_dir=tmp_path_factory.mktemp("inductor-cache"),
        verbose=True,
        stream=stream,
    )
    started = time.perf_counter()
    document = run_config(load_config_file(config_path, repo_root=REPO_ROOT), options)
    wall_s = time.perf_counter() - started
    sys.stderr.write(f"\n[diagnostics run with {measuring_python}: {wall_s:.0f} s]\n")
    return DiagnosticsRun(
        measuring_python,
        document,
        render_run_text(parse(document, str(tmp / "result.json"))),
        stream.getvalue(),
        wall_s,
        skipped,
    )


def entry_spec(file: str) -> str:
    return file if ":" in file else f"{file}:make_step"


def missing_libraries(python: str) -> dict[str, str]:
    """Steps whose library `python` cannot import, with the reason (transformers 5.x needs
    torch >= 2.6; the old-torch environment holds torch only)."""
    skipped = {}
    for step, library in STEP_NEEDS.items():
        probe = [python, "-c", f"import {library}"]
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            error = (done.stderr.strip().splitlines() or ["import failed"])[-1]
            skipped[step] = f"{library} is not importable by {python}: {error}"
    return skipped
