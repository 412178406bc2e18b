"""Numerics of a step with dropout through the real runner (Inductor, CPU): the compiled copy
is compiled again with fallback_random (recorded: compiled_graphs, compiled_copy_s), both
sides draw the same dropout masks, and a difference only the compiled model computes (a
1.05 scale next to the dropout, examples/test_steps/dropout_differs.py) still fails and is
named. Without fallback_random every tensor would differ by the masks, planted or not."""

from __future__ import annotations

import io

import pytest
from cli_helpers import REPO_ROOT, TORCH_PYTHON, write_config

from compilegate.config.loading import load_config_file
from compilegate.run.orchestrate import RunOptions, run_config
from compilegate.schemas import validation_errors

pytestmark = pytest.mark.compile

STEP = (
    "  - name: dropout_differs\n"
    "    entry: examples/test_steps/dropout_differs.py:make_step\n"
    "    variants: [{mode: default}]\n"
    "    warmup: 2\n    iterations: 4\n    rounds: 2\n    threads: 1\n"
    "    variant_processes: 1\n"
)


def test_a_compiled_only_difference_next_to_dropout_fails_numerics(tmp_path) -> None:
    config = load_config_file(write_config(tmp_path / "compilegate.yml", STEP), repo_root=REPO_ROOT)
    options = RunOptions(out_path=tmp_path / "r.json", python=TORCH_PYTHON, stream=io.StringIO())
    document = run_config(config, options)
    assert validation_errors(document, "result") == []
    (variant,) = document["steps"][0]["variants"]
    assert variant["status"] == "ok", variant["error"]
    numerics = variant["numerics"]
    assert numerics["fallback_random"] is True
    assert numerics["compiled_graphs"] >= 1 and numerics["compiled_copy_s"] > 0
    assert numerics["status"] == "fail", numerics
    assert {"loss", "fc2.weight.grad"} <= set(numerics["failed"])
    worst = numerics["worst"][0]
    assert worst["rmse_compiled"] > 100 * worst["rmse_eager"]


NOISY_LOSS = (
    "  - name: noisy\n"
    "    entry: examples/test_steps/noisy_loss.py:make_step\n"
    "    variants: [{mode: default}]\n"
    "    warmup: 2\n    iterations: 4\n    rounds: 2\n    threads: 1\n"
    "    variant_processes: 1\n"
    "  - name: noisy_differs\n"
    "    entry: examples/test_steps/noisy_loss.py:make_step_differs\n"
    "    variants: [{mode: default}]\n"
    "    warmup: 2\n    iterations: 4\n    rounds: 2\n    threads: 1\n"
    "    variant_processes: 1\n"
)


def test_random_draws_only_in_the_loss_are_checked_without_a_second_compile(tmp_path) -> None:
    """Issue 40: the loss's own draws run eagerly on both sides (a compiled model), so the
    numerics use the timed code: no fallback_random, no graph compiled again; a compiled-only
    difference in the model still fails."""
    config = load_config_file(
        write_config(tmp_path / "compilegate.yml", NOISY_LOSS), repo_root=REPO_ROOT
    )
    options = RunOptions(out_path=tmp_path / "r.json", python=TORCH_PYTHON, stream=io.StringIO())
    document = run_config(config, options)
    assert validation_errors(document, "result") == []
    clean, sneaky = (step["variants"][0] for step in document["steps"])
    for variant in (clean, sneaky):
        assert variant["status"] == "ok", variant["error"]
        assert variant["numerics"]["fallback_random"] is False
        assert variant["numerics"]["compiled_graphs"] == 0
    assert clean["numerics"]["status"] == "pass", clean["numerics"]
    assert sneaky["numerics"]["status"] == "fail", sneaky["numerics"]
    assert "fc1.weight.grad" in sneaky["numerics"]["failed"]
