"""PyTorch's accuracy rule as compilegate applies it, on synthetic tensors (no compile)."""

from __future__ import annotations

import collections

import pytest

torch = pytest.importorskip("torch")

from compilegate.child.numerics import (  # noqa: E402 - after the torch skip
    compare_runs,
    judge,
    summarize_checks,
    to_float64,
)
from compilegate.report.numerics_words import compared_words  # noqa: E402
from compilegate.results.model import Numerics, part_of  # noqa: E402

TOL = 1e-4
RULE = {"tol": TOL, "multiplier": 2.0, "cosine_min": 0.99}


def said(record: dict) -> str:
    """What the report says of the child's numerics record (report/numerics_words.py)."""
    return compared_words(part_of(Numerics, record)) or ""


def tensors(n: int = 4096, seed: int = 0) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    reference = torch.randn(n, generator=generator, dtype=torch.float64)
    noise = torch.randn(n, generator=generator, dtype=torch.float64)
    return reference, noise


def test_identical_and_close_pass_by_allclose():
    ref, noise = tensors()
    eager = ref.float()
    verdict = judge(eager, eager + 1e-6 * noise.float(), ref, **RULE)
    assert verdict["passed"] and verdict["rule"] == "allclose"
    assert verdict["rmse_compiled"] is not None and verdict["max_abs_diff"] < TOL


def test_beyond_allclose_but_as_close_to_fp64_as_eager_passes():
    """Eager itself is 1e-3 off the fp64 truth; compiled is off by as much, differently."""
    ref, noise = tensors()
    _, other = tensors(seed=1)
    eager, compiled = ref + 1e-3 * noise, ref + 1e-3 * other
    verdict = judge(eager.float(), compiled.float(), ref, **RULE)
    assert verdict["rule"] == "fp64_rmse" and verdict["passed"]
    assert verdict["rmse_compiled"] == pytest.approx(verdict["rmse_eager"], rel=0.1)


def test_compiled_much_worse_than_eager_fails_and_multiplier_depends_on_dtype():
    ref, noise = tensors()
    eager, compiled = ref + 1e-3 * noise, ref + 2.5e-3 * noise
    fp32 = judge(eager.float(), compiled.float(), ref, **RULE)
    assert fp32["rule"] == "fp64_rmse" and not fp32["passed"]
    low_precision = judge(eager.float(), compiled.float(), ref, **{**RULE, "multiplier": 3.0})
    assert low_precision["passed"]  # bf16/fp16 autocast: m = 3


def test_tol_over_ten_slack_when_eager_is_exact():
    ref, _ = tensors()
    compiled = ref.clone()
    compiled[0] += 5e-4  # not allclose; rmse 7.8e-6 <= 2 * 0 + tol / 10 = 1e-5
    verdict = judge(ref, compiled, ref, **RULE)
    assert verdict["rule"] == "fp64_rmse" and verdict["passed"]
    compiled[1] += 5e-4  # rmse 1.1e-5: over the slack
    assert not judge(ref, compiled, ref, **RULE)["passed"]


def test_cosine_decides_without_a_reference():
    ref, noise = tensors()
    close = judge(ref.float(), (ref + 0.05 * noise).float(), None, **RULE)
    assert close["rule"] == "cosine" and close["passed"] and close["cosine"] > 0.99
    far = judge(ref.float(), (ref + 0.5 * noise).float(), None, **RULE)
    assert not far["passed"] and far["cosine"] < 0.99


def test_integers_must_be_equal_and_shapes_must_match():
    steps = torch.tensor(3)
    assert judge(steps, torch.tensor(3), None, **RULE)["passed"]
    assert not judge(steps, torch.tensor(4), None, **RULE)["passed"]
    assert not judge(torch.zeros(3), torch.zeros(4), None, **RULE)["passed"]


def test_nan_only_in_compiled_fails_nan_on_both_sides_passes():
    ref, _ = tensors(8)
    bad = ref.clone()
    bad[0] = float("nan")
    failed = judge(ref.float(), bad.float(), ref, **RULE)
    assert not failed["passed"]
    assert failed["max_abs_diff"] is None and failed["rmse_compiled"] is None  # JSON-safe
    assert judge(bad.float(), bad.float(), ref, **RULE)["passed"]


def snapshot(loss: float, weight: torch.Tensor, steps: int = 3) -> dict:
    return {
        "loss": ("loss", torch.tensor(loss)),
        "fc.weight.grad": ("grad", weight),
        "fc.weight": ("param", weight * 2),
        "bn.num_batches_tracked": ("buffer", torch.tensor(steps)),
    }


def test_summary_names_the_tensors_that_differ_worst_first():
    ref, noise = tensors(64)
    eager = [snapshot(1.0, ref.float())]
    compiled = [snapshot(1.0, (ref + 0.1 * noise).float())]
    reference = [snapshot(1.0, ref)]
    results = compare_runs(eager, compiled, reference, **RULE)
    out = summarize_checks(
        results, {"steps": 1, "dtype": "fp32", "tol": TOL}, reference_error=None, cosine_min=0.99
    )
    assert out["status"] == "fail"
    assert out["checked"] == ["loss", "fc.weight.grad", "fc.weight", "bn.num_batches_tracked"]
    assert out["failed"] == ["fc.weight.grad", "fc.weight"]
    assert {w["tensor"] for w in out["worst"][:2]} == {"fc.weight.grad", "fc.weight"}
    assert out["worst"][0]["kind"] in ("grad", "param") and out["worst"][0]["passed"] is False
    assert set(out["worst"][0]) == {
        "tensor",
        "kind",
        "step",
        "passed",
        "rmse_compiled",
        "rmse_eager",
        "cosine",
        "max_abs_diff",
    }
    assert out["reason"] == "compared" and out["reference"] == "float64"
    assert "fc.weight.grad" in said(out)


def test_summary_passes_and_says_when_there_was_no_reference():
    ref, _ = tensors(64)
    runs = [snapshot(1.0, ref.float())]
    results = compare_runs(runs, runs, None, **RULE)
    out = summarize_checks(
        results,
        {"steps": 1, "dtype": "fp32", "tol": TOL},
        reference_error="RuntimeError: expected scalar type Double",
        cosine_min=0.99,
    )
    assert out["status"] == "pass" and out["failed"] == [] and out["reference"] == "none"
    assert "no float64 reference" in said(out)


def test_a_tensor_missing_on_the_compiled_side_fails():
    ref, _ = tensors(8)
    compiled = snapshot(1.0, ref.float())
    del compiled["fc.weight"]
    results = compare_runs([snapshot(1.0, ref.float())], [compiled], None, **RULE)
    assert [r["tensor"] for r in results if not r["passed"]] == ["fc.weight"]


def test_to_float64_casts_floating_tensors_in_any_structure():
    pair = collections.namedtuple("Pair", "x y")
    batch = {
        "x": torch.ones(2),
        "ids": torch.ones(2, dtype=torch.long),
        "rest": [pair(torch.ones(1, dtype=torch.float16), 3), (torch.zeros(1),)],
    }
    out = to_float64(batch)
    assert out["x"].dtype == torch.float64 and out["ids"].dtype == torch.long
    assert isinstance(out["rest"][0], pair) and out["rest"][0].x.dtype == torch.float64
    assert out["rest"][0].y == 3 and out["rest"][1][0].dtype == torch.float64


def test_environment_sets_fallback_random_and_tf32_off_then_restores():
    import torch._inductor.config as inductor_config

    from compilegate.child.numerics_env import fresh_dynamo, tf32_off

    torch.backends.cuda.matmul.allow_tf32 = True
    before = inductor_config.fallback_random
    with tf32_off("cuda") as changed, fresh_dynamo(fallback_random=True):
        assert changed is True
        assert inductor_config.fallback_random is True
        assert torch.backends.cuda.matmul.allow_tf32 is False
    assert inductor_config.fallback_random == before
    assert torch.backends.cuda.matmul.allow_tf32 is True
    with tf32_off("cpu") as changed:  # TF32 is CUDA-only: nothing to touch on CPU
        assert changed is False and torch.backends.cuda.matmul.allow_tf32 is True
    torch.backends.cuda.matmul.allow_tf32 = False


def test_the_rng_watch_sees_dropout_and_not_a_plain_layer():
    from compilegate.child.numerics_env import RngWatch

    x = torch.ones(4, 8)
    for layer, draws in ((torch.nn.Dropout(0.5), True), (torch.nn.Linear(8, 2), False)):
        watch = RngWatch("cpu")
        watch.start()
        layer(x).sum()
        watch.stop()
        assert watch.drew is draws
