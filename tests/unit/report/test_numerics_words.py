"""Issue 53's last items: a numerics check that reached a verdict records the code `compared`
with its figures (checked, failed, and why there was no float64 reference: the float64
copy's error, or its loss's disagreement with eager's as facts); report/numerics_words.py
words them. A document written the new way says, on every screen, what an older document
holding the child's sentences (child/numerics.py at 5a5d0e2) said for the same facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_child_codes_words import numerics, texts, with_variant

from compilegate.report.numerics_words import compared_words, disagreement_words
from compilegate.results.model import Numerics, ReferenceDisagreement, part_of

torch = pytest.importorskip("torch")

from compilegate.child.numerics import reference_disagreement, summarize_checks  # noqa: E402

DIFFERS = (
    "its loss differs from eager's by 0.0013 (relative) at iteration 0, where rounding allows "
    "0.001: it did not compute the same step (does the step draw random numbers that follow "
    "the dtype, e.g. randn_like?)"
)
NOT_FINITE = "its loss is nan at iteration 1 where eager's is 1.5"
RAISED = "RuntimeError: mat1 and mat2 must have the same dtype"
SEVEN = [f"grad:w{i}" for i in range(7)]
# (the new record's fields, the older record's reference_error and reason: the child's words)
CASES = {
    "failed, with a reference": (
        {"failed": ["loss", "grad:w"]},
        None,
        "2 of 9 tensors differ beyond tolerance: loss, grad:w",
    ),
    "failed, more than five": (
        {"failed": SEVEN},
        None,
        "7 of 9 tensors differ beyond tolerance: grad:w0, grad:w1, grad:w2, grad:w3, grad:w4 "
        "and 2 more",
    ),
    "passed, the reference's loss differs": (
        {
            "reference_disagreement": {
                "kind": "differs",
                "iteration": 0,
                "loss": 2.0026,
                "eager_loss": 2.0,
                "relative": 0.0012983,
                "allowed": 0.001,
            }
        },
        DIFFERS,
        f"no float64 reference ({DIFFERS}); judged by allclose, else cosine >= 0.99",
    ),
    "failed, the reference's loss is NaN": (
        {
            "failed": ["loss"],
            "reference_disagreement": {
                "kind": "not_finite",
                "iteration": 1,
                "loss": "nan",
                "eager_loss": 1.5,
            },
        },
        NOT_FINITE,
        "1 of 9 tensors differ beyond tolerance: loss; no float64 reference "
        f"({NOT_FINITE}); judged by allclose, else cosine >= 0.99",
    ),
    "passed, the float64 copy raised": (
        {"reference_error": RAISED},
        RAISED,
        f"no float64 reference ({RAISED}); judged by allclose, else cosine >= 0.99",
    ),
}


def records(
    fields: dict[str, Any], old_error: str | None, old_reason: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the numerics record a run of this checkout writes, the one a run at 5a5d0e2 wrote)."""
    common = numerics(
        status="fail" if fields.get("failed") else "pass",
        checked=["loss", *SEVEN, "w"],
        failed=fields.get("failed", []),
        cosine_min=0.99,
        reference="none" if old_error else "float64",
        compared_by="allclose_else_cosine" if old_error else "allclose_else_fp64_rmse",
    )
    new = {**common, **fields, "reason": "compared"}
    old = {**common, "reason": old_reason}
    if old_error is not None:
        old["reference_error"] = old_error
    return new, old


@pytest.mark.parametrize("case", list(CASES))
def test_a_verdicts_figures_are_said_as_the_childs_sentences_were(tmp_path: Path, case: str):
    fields, old_error, old_reason = CASES[case]
    new, old = records(fields, old_error, old_reason)
    assert compared_words(part_of(Numerics, new)) == old_reason
    new_texts = texts(tmp_path, with_variant(numerics=new))
    assert new_texts == texts(tmp_path, with_variant(numerics=old))
    if old_error is not None:  # said beside the verdict, wherever it is shown
        assert old_error in " ".join(new_texts["run"].split())


def loss_only(*values: float) -> list:
    return [{"loss": ("loss", torch.tensor(v, dtype=torch.float64))} for v in values]


def test_the_child_records_the_disagreement_as_facts_and_the_report_says_it() -> None:
    eager = loss_only(2.0, 1.5)
    _, differs = reference_disagreement(eager, loss_only(2.0, 1.6), rel_tol=1e-3, abs_tol=1e-5)
    assert differs == {
        "kind": "differs",
        "iteration": 1,
        "loss": 1.6,
        "eager_loss": 1.5,
        "relative": pytest.approx(0.1 / 1.6),
        "allowed": 1e-3,
    }
    assert disagreement_words(part_of(ReferenceDisagreement, differs)) == (
        "its loss differs from eager's by 0.063 (relative) at iteration 1, where rounding "
        "allows 0.001: it did not compute the same step (does the step draw random numbers "
        "that follow the dtype, e.g. randn_like?)"
    )
    _, nan = reference_disagreement(eager, loss_only(float("nan"), 1.5), rel_tol=1e-3, abs_tol=0)
    assert nan == {"kind": "not_finite", "iteration": 0, "loss": "nan", "eager_loss": 2.0}
    assert disagreement_words(part_of(ReferenceDisagreement, nan)) == (
        "its loss is nan at iteration 0 where eager's is 2.0"
    )


def test_the_childs_verdict_is_a_code_with_its_figures() -> None:
    passed = {"passed": True, "rule": "allclose", "_badness": 0.1}
    results = [
        {"tensor": "loss", "kind": "loss", "step": 0, **passed},
        {"tensor": "grad:w", "kind": "grad", "step": 0, **passed, "passed": False},
    ]
    base = {"steps": 1, "dtype": "fp32", "tol": 1e-4}
    why = {"kind": "not_finite", "iteration": 0, "loss": "inf", "eager_loss": 2.0}
    out = summarize_checks(results, base, reference_error=None, cosine_min=0.99, disagreement=why)
    assert out["reason"] == "compared" and out["reference"] == "none"
    assert out["reference_disagreement"] == why and "reference_error" not in out
    assert compared_words(part_of(Numerics, out)) == (
        "1 of 2 tensors differ beyond tolerance: grad:w; no float64 reference (its loss is "
        "inf at iteration 0 where eager's is 2.0); judged by allclose, else cosine >= 0.99"
    )
