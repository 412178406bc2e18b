"""Issue 17 item 4: a recompile after the measured window is seen and charged. The step's
last batch of every 100 is smaller (drop_last=False); compilegate times indices 0-6 here,
so without an epoch schedule it never sees index 99. With `epoch: {length: 100}` the
compiled copy also runs batches 99 and 100 (real torch.compile, Inductor, CPU, an empty
cache): the recompile at 99 is counted in recompiles and its seconds in the compile cost
the break-even is computed from."""

from __future__ import annotations

import io

import pytest
from cli_helpers import REPO_ROOT, TORCH_PYTHON, write_config

from compilegate.config.loading import load_config_file
from compilegate.run.orchestrate import RunOptions, run_config
from compilegate.schemas import validation_errors

pytestmark = pytest.mark.compile

STEP = (
    "    entry: examples/test_steps/epoch_end_batch.py:make_step\n"
    "    variants: [{mode: default}]\n    warmup: 2\n    iterations: 4\n    rounds: 2\n"
    "    variant_processes: 1\n    numerics: {enabled: false}\n"
)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("epoch")
    body = f"  - name: epoch\n{STEP}    epoch: {{length: 100}}\n  - name: no_epoch\n{STEP}"
    config = load_config_file(write_config(tmp / "compilegate.yml", body), repo_root=REPO_ROOT)
    options = RunOptions(
        out_path=tmp / "result.json",
        python=TORCH_PYTHON,
        inductor_cache_dir=tmp_path_factory.mktemp("empty-inductor-cache"),
        stream=io.StringIO(),
    )
    return run_config(config, options)


def variant(document: dict, step: str) -> dict:
    found = next(s for s in document["steps"] if s["name"] == step)
    assert found["status"] == "ok", found["error"]
    assert found["variants"][0]["status"] == "ok", found["variants"][0]["error"]
    return found["variants"][0]


def test_the_late_recompile_is_reported_and_charged(document: dict) -> None:
    assert validation_errors(document, "result") == []
    late = variant(document, "epoch")
    assert late["recompiles"]["count"] == 1, late["recompiles"]
    assert late["late_recompile_s"] > 0.05  # Dynamo and Inductor ran again
    # The compile window (torch.compile() to the end of the compiled warm-up, less eager's
    # warm-up) covers at least the warm-up difference; the late recompile comes on top.
    warmup_s = sum(late["warmup_s"]) - sum(late["eager_warmup_s"])
    assert late["compile_s"] - late["late_recompile_s"] >= warmup_s - 0.05
    assert late["compile_s"] == late["processes"][0]["compile_wall_s"]
    assert late["compile_cost"]["cold_samples"][0]["wall_s"] == late["compile_s"]
    charged = late["payoff"]["compile_s"]["estimate"]
    assert charged == pytest.approx(late["compile_s"])


def test_without_an_epoch_schedule_the_late_recompile_is_invisible(document: dict) -> None:
    plain = variant(document, "no_epoch")
    assert plain["recompiles"]["count"] == 0
    assert plain["late_recompile_s"] is None
