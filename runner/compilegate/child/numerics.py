"""Does the compiled step compute the same thing as eager? (child process)

Three fresh copies of the step from the same seed — eager, compiled, and an eager float64
reference — run `numerics.steps` iterations from identical state. Loss, every gradient
(before optimizer.step), every parameter after the step and every buffer are compared with
PyTorch's own accuracy rule (torch._dynamo.utils.same, used by its benchmark harness):

* pass if allclose(eager, compiled, atol=tol, rtol=tol);
* else pass if rmse(fp64, compiled) <= m * rmse(fp64, eager) + tol / 10, with m = 2 in fp32
  and 3 under bf16/fp16 autocast: the compiled error may not be much worse than eager's own;
* without a float64 reference (the model cannot run in float64): cosine >= cosine_min.

The reference is the eager step with its model and inputs cast, nothing else: the factory
builds the model and `batch(i)` draws the inputs under eager's default dtype and RNG state,
then floating tensors are cast to float64 (PyTorch's harness does the same). Running user
code under a float64 default dtype would draw different numbers: torch.randn gives other
values per dtype from 16 elements on, so a batch drawn at call time differed from eager's by
5 % and any compiled error below twice that passed. A draw that follows the input's dtype
(`torch.randn_like(x)` in forward) still differs; so the reference must reproduce eager's
loss to within rounding (REFERENCE_LOSS_REL_TOL), or it is discarded, and said so.

Dropout: Inductor draws its own random numbers unless `fallback_random` is set, which would
fail every dropout model; it is set (after a Dynamo reset) when the eager copy drew random
numbers where the compiled code runs — a compiled model's forward, or the backward; a
compiled step's loss too — and each side is seeded identically per iteration. A step that
draws none there (random draws only in the loss of a compiled model, which both sides run
eagerly from the same seed) is checked with the code the timed compile produced, without
compiling it again (numerics_env.py). TF32 is off on every side on a GPU: comparable errors.

The float64 reference is the same for every variant of a step: the step's eager process
computes it once (write_reference) and each variant's first process loads it; a variant
computes its own only when no file came (a container launcher, a failed write).

Standard library and torch only; never raises (a failure becomes status "error").
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from typing import Any, Callable, Dict, Tuple

import torch

from .numerics_env import RngWatch, fresh_dynamo, tf32_off
from .protocol import Phase
from .training import TrainingStep, seed_everything

WORST_SHOWN = 5
MULTIPLIER = {None: 2.0, "bf16": 3.0, "fp16": 3.0}
# How far the float64 reference's loss may be from eager's (relative, any iteration) before it
# is not the same computation. fp32 rounding gives ~1e-7 on the test steps; autocast ~1e-2.
REFERENCE_LOSS_REL_TOL = {None: 1e-3, "bf16": 5e-2, "fp16": 5e-2}
# How compiled was compared with eager (the record's `compared_by`): allclose, else the
# float64 RMSE ratio; or, without a float64 reference, allclose, else cosine >= cosine_min.
COMPARED_WITH_REFERENCE = "allclose_else_fp64_rmse"
COMPARED_WITHOUT = "allclose_else_cosine"
# Why there was no float64 reference (a torch error may be long: its start says what it is).
REFERENCE_ERROR_CHARS = 240
# name -> (kind, tensor); typing's aliases: this one is evaluated at import (the child: 3.8)
Snapshot = Dict[str, Tuple[str, torch.Tensor]]


def check_numerics(
    builder: Any,
    settings: dict[str, Any],
    variant: dict[str, Any],
    progress: Callable[[Phase, str], None],
    reference_path: str | None = None,
) -> dict[str, Any]:
    """Run eager, compiled and float64 copies and judge every tensor; never raises.

    `reference_path`: the float64 reference the step's eager process computed once for
    every variant (write_reference); it is computed here when the file is missing."""
    numerics = settings.get("numerics", {})
    steps, tol = int(numerics.get("steps", 2)), float(numerics.get("tol", 1e-4))
    cosine_min = float(numerics.get("cosine_min", 0.99))
    amp = settings.get("amp")
    base = {"steps": steps, "dtype": amp or "fp32", "tol": tol}
    if steps < 1:
        return {**base, "status": "skipped", "reason": "skipped_zero_steps"}
    try:
        with tf32_off(builder.device) as tf32_changed:
            progress(Phase.NUMERICS, f"numerics: eager copy, {steps} step(s)")
            watch = RngWatch(builder.device)
            # What a compiled model draws: its forward and the backward; a compiled step's
            # loss too (random draws in the loss of a compiled model run eagerly on both sides).
            model_only = variant["compile_target"] != "step"
            eager = run_copy(builder, settings, steps, rng_watch=watch, model_only=model_only)
            recompile = watch.drew or tf32_changed
            how = "compiled again with fallback_random" if watch.drew else "the timed code"
            progress(
                Phase.NUMERICS, f"numerics: compiled copy ({variant['id']}, {how}), {steps} step(s)"
            )
            with fresh_dynamo(watch.drew) if recompile else contextlib.nullcontext():
                graphs_before, started = dynamo_graphs(), time.perf_counter()
                compiled = run_copy(builder, settings, steps, variant=variant)
                compiled_copy_s = time.perf_counter() - started
                graphs_after = dynamo_graphs()
            if builder.group is not None:  # a rank: DDP keeps every rank's parameters equal
                builder.group.note_compiled_parameters(compiled[-1] if compiled else {})
            shared = load_reference(reference_path, steps)
            if shared is None:
                progress(Phase.REFERENCE, "numerics: float64 reference")
                reference, ref_error = _try_reference(builder, settings, steps)
            else:
                reference, ref_error = shared
        base["fallback_random"] = watch.drew
        base["compiled_copy_s"] = round(compiled_copy_s, 3)
        if graphs_before is not None and graphs_after is not None:
            base["compiled_graphs"] = graphs_after - graphs_before
        base["reference_from"] = "variant" if shared is None else "eager"
        loss_rel_diff, disagreement = None, None
        if reference is not None:
            loss_rel_diff, disagreement = reference_disagreement(
                eager, reference, rel_tol=REFERENCE_LOSS_REL_TOL.get(amp, 5e-2), abs_tol=tol / 10
            )
            if disagreement is not None:
                reference = None
        results = compare_runs(
            eager,
            compiled,
            reference,
            tol=tol,
            multiplier=MULTIPLIER.get(amp, 3.0),
            cosine_min=cosine_min,
        )
        summary = summarize_checks(
            results,
            base,
            reference_error=ref_error,
            cosine_min=cosine_min,
            disagreement=disagreement,
        )
        return {**summary, "reference_loss_rel_diff": loss_rel_diff}
    except Exception as exc:  # the user's step, or torch, failed: report it, keep the timing
        error = f"{type(exc).__name__}: {exc}"[:500]
        return {**base, "status": "error", "reason": "error", "error": error}


def dynamo_graphs() -> int | None:
    """Graphs Dynamo has compiled in this process since its last reset (None: a torch without
    the counter): the numerics' compiled copy adds none when it runs the timed code."""
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return None
    return int(counters["stats"].get("unique_graphs", 0))


def run_copy(
    builder: Any,
    settings: dict[str, Any],
    steps: int,
    *,
    variant: dict[str, Any] | None = None,
    float64: bool = False,
    rng_watch: RngWatch | None = None,
    model_only: bool = False,
) -> list[Snapshot]:
    """Build a fresh copy, run `steps` iterations, return what each iteration produced;
    `rng_watch` sees whether forward, loss and backward drew random numbers (`model_only`:
    the model's forward and the backward, not the loss's own forward)."""
    parts = builder.build()  # under eager's default dtype: the same initial values
    if float64:
        parts.model.double()  # cast, never re-drawn
        batch = parts.batch
        parts.batch = lambda index: to_float64(batch(index))  # drawn as eager draws, then cast
    step = TrainingStep(
        parts,
        device=builder.device,
        amp=None if float64 else settings.get("amp"),
        compile_kwargs=None if variant is None else variant["compile_kwargs"],
        compile_target="model" if variant is None else variant["compile_target"],
        group=builder.group,
    )
    grads: dict[str, tuple[str, torch.Tensor]] = {}

    def snapshot_grads() -> None:  # grads are judged before the optimizer moves
        for name, param in parts.model.named_parameters():
            grad = param.grad if param.grad is not None else torch.zeros_like(param)
            grads[f"{name}.grad"] = ("grad", _keep(grad))

    step.before_optimizer_step = snapshot_grads
    step.rng_watch = rng_watch
    step.rng_watch_model_only = model_only
    out = []
    for index in range(steps):
        grads.clear()
        seed_everything(int(settings.get("seed", 0)) + 1000 + index)
        loss = step(index)
        produced: Snapshot = {"loss": ("loss", _keep(loss))}
        produced.update(grads)
        for name, param in parts.model.named_parameters():
            produced[name] = ("param", _keep(param))
        for name, buffer in parts.model.named_buffers():
            produced[name] = ("buffer", _keep(buffer))
        out.append(produced)
    return out


def _keep(tensor: torch.Tensor) -> torch.Tensor:
    """A CPU copy: three copies' snapshots of every tensor must not crowd the GPU. A sharded
    tensor (FSDP2's DTensor) is gathered whole first: every rank gathers in the same order."""
    gather = getattr(tensor, "full_tensor", None)
    if callable(gather):
        tensor = gather()
    return tensor.detach().to("cpu", copy=True)


def _try_reference(
    builder: Any, settings: dict[str, Any], steps: int
) -> tuple[list[Snapshot] | None, str | None]:
    try:
        return run_copy(builder, settings, steps, float64=True), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]


def write_reference(builder: Any, settings: dict[str, Any], path: str) -> None:
    """Compute the float64 reference once (in the step's eager process) and save it for every
    variant's numerics: its snapshots, or why there is none. Never raises: a variant that
    finds no file computes the reference itself."""
    steps = int(settings.get("numerics", {}).get("steps", 2))
    if steps < 1:
        return
    with contextlib.suppress(Exception):
        reference, error = _try_reference(builder, settings, steps)
        partial = f"{path}.partial"  # a write cut short is never read as a reference
        torch.save({"steps": steps, "snapshots": reference, "error": error}, partial)
        os.replace(partial, path)


def load_reference(path: str | None, steps: int) -> tuple[list[Snapshot] | None, str | None] | None:
    """(snapshots, why none) from write_reference's file; None when there is no usable file
    of `steps` iterations.
    Tensors, strings and containers only (weights_only where torch has it)."""
    if not path:
        return None
    try:
        try:
            saved = torch.load(path, weights_only=True)
        except TypeError:  # a torch without weights_only
            saved = torch.load(path)
        if saved["steps"] != steps:
            return None
        return saved["snapshots"], saved["error"]
    except Exception:
        return None


def reference_disagreement(
    eager: list[Snapshot], reference: list[Snapshot], *, rel_tol: float, abs_tol: float
) -> tuple[float | None, dict[str, Any] | None]:
    """(largest relative loss difference, why the reference is not eager's computation).

    The why is None when every iteration's float64 loss is within rel_tol * |loss| + abs_tol
    of eager's: rounding, not other data or other random draws. Else the first iteration
    that is not, as facts (the record's `reference_disagreement`; report/numerics_words.py
    words them): `kind` differs (by `relative`, where rounding allows `allowed`) or
    not_finite (one side's loss is NaN or inf), with both losses (a non-finite one as
    "nan", "inf" or "-inf": JSON has no NaN).
    """
    worst, why = 0.0, None
    for index, (e_step, r_step) in enumerate(zip(eager, reference)):
        e_loss = float(e_step["loss"][1].double().sum())
        r_loss = float(r_step["loss"][1].double().sum())
        diff = abs(r_loss - e_loss)
        rel = diff / abs(r_loss) if r_loss != 0.0 else (0.0 if diff == 0.0 else math.inf)
        losses = {
            "iteration": index,
            "loss": _json_number(r_loss),
            "eager_loss": _json_number(e_loss),
        }
        if not math.isfinite(rel):  # NaN or inf on one side (both non-finite: nothing to say)
            if math.isfinite(e_loss) != math.isfinite(r_loss):
                why = why or {"kind": "not_finite", **losses}
            continue
        worst = max(worst, rel)
        if why is None and diff > rel_tol * abs(r_loss) + abs_tol:
            why = {"kind": "differs", **losses, "relative": rel, "allowed": rel_tol}
    return worst, why


def _json_number(value: float) -> float | str:
    """A number as JSON carries it: a non-finite one as its name ("nan", "inf", "-inf")."""
    return value if math.isfinite(value) else str(value)


def to_float64(value: Any) -> Any:
    """Floating tensors in a tensor / tuple / list / dict structure, cast to float64."""
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, dict):
        return {k: to_float64(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        cast = [to_float64(v) for v in value]
        return type(value)(*cast) if hasattr(value, "_fields") else type(value)(cast)
    return value


def judge(
    eager: torch.Tensor,
    compiled: torch.Tensor,
    reference: torch.Tensor | None,
    *,
    tol: float,
    multiplier: float,
    cosine_min: float,
) -> dict[str, Any]:
    """PyTorch's rule for one tensor: allclose, else fp64 RMSE ratio, else cosine."""
    if eager.shape != compiled.shape:
        return {
            "passed": False,
            "rule": "shape",
            "rmse_compiled": None,
            "rmse_eager": None,
            "cosine": None,
            "max_abs_diff": None,
        }
    if not eager.is_floating_point() and not eager.is_complex():
        equal = bool(torch.equal(eager.cpu(), compiled.cpu()))
        return {
            "passed": equal,
            "rule": "exact",
            "rmse_compiled": None,
            "rmse_eager": None,
            "cosine": None,
            "max_abs_diff": None if equal else _max_abs(eager, compiled),
        }
    e, c = eager.detach().double().cpu(), compiled.detach().double().cpu()
    out: dict[str, Any] = {
        "max_abs_diff": _max_abs(e, c),
        "cosine": _cosine(e, c),
        "rmse_compiled": None,
        "rmse_eager": None,
    }
    has_reference = reference is not None and reference.shape == e.shape
    # reported even when allclose decides: it ranks the `worst` list
    if reference is not None and has_reference:
        ref = reference.detach().double().cpu()
        out.update(rmse_compiled=_finite(_rmse(ref, c)), rmse_eager=_finite(_rmse(ref, e)))
    if torch.allclose(e, c, atol=tol, rtol=tol, equal_nan=True):
        out.update(passed=True, rule="allclose")
    elif has_reference and out["rmse_compiled"] is not None and out["rmse_eager"] is not None:
        passed = out["rmse_compiled"] <= multiplier * out["rmse_eager"] + tol / 10
        out.update(passed=bool(passed), rule="fp64_rmse")
    else:
        cosine = out["cosine"]
        out.update(passed=cosine is not None and cosine >= cosine_min, rule="cosine")
    return out


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.sqrt(torch.mean((a - b) ** 2))) if a.numel() else 0.0


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float | None:
    if a.numel() == 0:
        return 0.0
    diff = (a.double().cpu() - b.double().cpu()).abs().max()
    return _finite(float(diff))


def _cosine(a: torch.Tensor, b: torch.Tensor) -> float | None:
    a, b = a.flatten(), b.flatten()
    norms = float(a.norm()) * float(b.norm())
    if norms == 0.0:
        return 1.0 if torch.equal(a, b) else 0.0
    return _finite(float(torch.dot(a, b)) / norms)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None  # JSON has no NaN/inf


def compare_runs(
    eager: list[Snapshot],
    compiled: list[Snapshot],
    reference: list[Snapshot] | None,
    *,
    tol: float,
    multiplier: float,
    cosine_min: float,
) -> list[dict[str, Any]]:
    """One verdict per (iteration, tensor) present on both sides."""
    results = []
    for step, (e_step, c_step) in enumerate(zip(eager, compiled)):
        r_step = reference[step] if reference is not None else {}
        for name, (kind, e_tensor) in e_step.items():
            if name not in c_step:
                results.append(
                    {
                        "tensor": name,
                        "kind": kind,
                        "step": step,
                        "passed": False,
                        "rule": "missing",
                        "rmse_compiled": None,
                        "rmse_eager": None,
                        "cosine": None,
                        "max_abs_diff": None,
                    }
                )
                continue
            ref = r_step.get(name, (kind, None))[1] if reference is not None else None
            verdict = judge(
                e_tensor,
                c_step[name][1],
                ref,
                tol=tol,
                multiplier=multiplier,
                cosine_min=cosine_min,
            )
            results.append(
                {
                    "tensor": name,
                    "kind": kind,
                    "step": step,
                    **verdict,
                    "_badness": _badness(verdict, multiplier, tol, cosine_min),
                }
            )
    return results


def _badness(verdict: dict[str, Any], multiplier: float, tol: float, cosine_min: float) -> float:
    """How close to (or past) failing: >1 failed. Ranks the `worst` list."""
    if verdict["rmse_compiled"] is not None and verdict["rmse_eager"] is not None:
        return float(verdict["rmse_compiled"] / (multiplier * verdict["rmse_eager"] + tol / 10))
    if verdict["rule"] == "cosine" and verdict["cosine"] is not None:
        return float((1 - verdict["cosine"]) / max(1 - cosine_min, 1e-12))
    if verdict["rule"] == "allclose":
        return min(1.0, (verdict["max_abs_diff"] or 0.0) / tol) * 0.999
    return 0.0 if verdict["passed"] else math.inf


def summarize_checks(
    results: list[dict[str, Any]],
    base: dict[str, Any],
    *,
    reference_error: str | None,
    cosine_min: float,
    disagreement: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The numerics record: the verdict, the tensors, and how they were judged as fields
    (`reference`, `reference_error` or `reference_disagreement`, `compared_by`,
    `cosine_min`) that the report reads; `reason` is the code `compared` (since issue 53's
    last items: report/numerics_words.py words the verdict's figures)."""
    checked = list(dict.fromkeys(r["tensor"] for r in results))
    failed = list(dict.fromkeys(r["tensor"] for r in results if not r["passed"]))
    ranked = sorted(results, key=lambda r: (r["passed"], -r.get("_badness", math.inf)))
    worst = [
        {k: v for k, v in r.items() if k not in ("_badness", "rule")} for r in ranked[:WORST_SHOWN]
    ]
    referenced = reference_error is None and disagreement is None
    out = {
        **base,
        "status": "fail" if failed else "pass",
        "reason": "compared",
        "checked": checked,
        "failed": failed,
        "worst": worst,
        "reference": "float64" if referenced else "none",
        "compared_by": COMPARED_WITH_REFERENCE if referenced else COMPARED_WITHOUT,
        "cosine_min": cosine_min,
    }
    if reference_error is not None:
        out["reference_error"] = reference_error[:REFERENCE_ERROR_CHARS]
    elif disagreement is not None:
        out["reference_disagreement"] = disagreement
    return out
