"""A numerics check that ran without its float64 reference says so wherever its verdict is
shown (issue 54, finding 5): a diffusion transformer hard-coding float32 in its timestep
embedding could not run in float64, the check fell back to allclose/cosine against eager,
and only the result JSON said it — the terminal and the comment said "pass".

The child records it as fields (`reference: "none"`, `reference_error`, `compared_by`,
`cosine_min`: child/numerics.py's summarize_checks); the report reads those alone and never
reads the check's `reason` words back (report/row_words/numerics_reference.py)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import torch
from gate_docs import result, step, variant
from report_runs import judge

from compilegate.child.numerics import compare_runs, summarize_checks
from compilegate.report.comment import render_comment
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse

WHY = "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Double"
FALLBACK = "compiled compared with eager by allclose, else cosine ≥ 0.99 only"
# How the child said it in words before the facts were recorded (and still says it there).
OLD_REASON = f"no float64 reference ({WHY}); judged by allclose, else cosine >= 0.99"


def numerics(
    status: str = "pass", reference: str = "none", why: str = WHY, **extra: Any
) -> dict[str, Any]:
    """A numerics record as the child writes it: facts as fields, and its words in `reason`
    (never read: here it says nothing the fields do, so only the fields can be shown)."""
    without = reference == "none"
    record: dict[str, Any] = {
        "status": status,
        "reference": reference,
        "compared_by": "allclose_else_cosine" if without else "allclose_else_fp64_rmse",
        "cosine_min": 0.99,
        "reason": "see the fields" if without or extra.get("failed") else None,
        **extra,
    }
    if without:
        record["reference_error"] = why
    return record


def document(**checked: Any) -> dict[str, Any]:
    """A DiT step with two variants, both checked as `checked` says."""
    return with_numerics(lambda: numerics(**checked))


def with_numerics(record: Any) -> dict[str, Any]:
    variants = [variant(), variant("reduce-overhead", mode="reduce-overhead")]
    for entry in variants:
        entry["numerics"] = record()
    return result(step("dit", variants=variants))


def flat(text: str) -> str:
    return " ".join(text.replace("\u00a0", " ").split())


def test_run_alone_says_it_beside_pass() -> None:
    text = flat(render_run_text(parse(document(), "r.json"), width=100))
    assert "numerics pass, no float64 reference" in text, text
    assert f"numerics checked without its float64 reference ({WHY}): {FALLBACK}" in text, text


def test_comment_first_screen_details_and_report_say_it(tmp_path: Path) -> None:
    base, head = document(), document()
    comment = render_comment(judge(tmp_path / "c", copy.deepcopy(base), head=head))
    headline = comment.splitlines()[0]
    assert headline.startswith("### ⚠️ compilegate passes, but numerics checked against "), headline
    assert not re.search(r"numerics[^;]*unchanged", headline), headline
    first_screen, details = (flat(part) for part in comment.split("<details>", 1))
    assert WHY in first_screen and FALLBACK in first_screen, first_screen
    assert "pass, no float64 reference" in details and WHY in details, details
    run_set = judge(tmp_path / "r", copy.deepcopy(base), head=head)
    report = flat(render_run_set_text(run_set))
    assert WHY in report and FALLBACK in report and "pass, no float64 reference" in report
    assert run_set.exit_code == 0  # said, not failed: the verdict is the check's


def test_a_failing_check_names_its_tensors_and_its_fallback(tmp_path: Path) -> None:
    failed = document(status="fail", failed=["grad:blocks.0.adaLN.weight"])
    comment = flat(render_comment(judge(tmp_path, document(), head=failed)))
    first_screen = comment.split("<details>", 1)[0]
    assert "grad:blocks.0.adaLN.weight" in first_screen and FALLBACK in first_screen, comment


def test_a_check_with_its_reference_says_nothing_more(tmp_path: Path) -> None:
    checked = document(reference="float64")
    text = flat(render_run_text(parse(checked, "r.json"), width=100))
    comment = flat(render_comment(judge(tmp_path, document(reference="float64"), head=checked)))
    for shown in (text, comment):
        assert "float64 reference" not in shown and "eager only" not in shown, shown
    assert re.search(r"^### compilegate passes: [^;]*numerics[^;]*unchanged", comment), comment


def test_the_threshold_said_is_the_recorded_one() -> None:
    """`cosine_min` as recorded (0.95 from the config), whatever the reason's words say."""
    record = {**numerics(), "cosine_min": 0.95, "reason": OLD_REASON}
    text = flat(render_run_text(parse(with_numerics(lambda: record), "r.json"), width=100))
    assert f"({WHY}): compiled compared with eager by allclose, else cosine ≥ 0.95 only" in text
    assert "0.99" not in text, text


def test_a_document_from_before_the_fields_is_read_as_recorded(tmp_path: Path) -> None:
    """`reference: "none"` with the old reason's words and no fields: the check is said to
    have had no reference (a field), but its words are not parsed for why or how."""

    def old() -> dict[str, Any]:
        return {"status": "pass", "reference": "none", "reason": OLD_REASON}

    text = flat(render_run_text(parse(with_numerics(old), "r.json"), width=100))
    assert "numerics pass, no float64 reference" in text, text
    said = "checked without its float64 reference (why not recorded): compiled compared with "
    assert f"{said}eager by allclose, else cosine only" in text, text
    comment = flat(render_comment(judge(tmp_path, with_numerics(old), head=with_numerics(old))))
    for shown in (text, comment):
        assert "mat1 and mat2" not in shown and "0.99 only" not in shown, shown


def test_words_without_the_fields_do_not_make_a_check_unreferenced() -> None:
    """A reason that happens to say "no float64 reference (…)" beside `reference: float64`
    is words, not a fact: the check had its reference."""
    record = {**numerics(reference="float64"), "reason": OLD_REASON}
    text = flat(render_run_text(parse(with_numerics(lambda: record), "r.json"), width=100))
    assert "checked without" not in text and "pass, no float64 reference" not in text, text


def snapshot(weight: torch.Tensor) -> dict[str, tuple[str, torch.Tensor]]:
    return {"loss": ("loss", weight.sum()), "fc.weight.grad": ("grad", weight)}


def float64_error() -> str:
    """The error a step that hard-codes float32 raises in float64, as _try_reference says it."""
    try:
        torch.nn.functional.linear(torch.ones(2, 4, dtype=torch.float64), torch.ones(3, 4))
    except RuntimeError as exc:
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError("float64 input through a float32 weight ran")


def child_record(reference_error: str | None) -> dict[str, Any]:
    """The child's numerics record for small CPU tensors, compared without a reference."""
    weight = torch.linspace(0.5, 1.5, 16)
    runs = [snapshot(weight)]
    results = compare_runs(
        runs, [snapshot(weight + 1e-3)], None, tol=1e-4, multiplier=2.0, cosine_min=0.97
    )
    base = {"steps": 1, "dtype": "fp32", "tol": 1e-4}
    return summarize_checks(results, base, reference_error=reference_error, cosine_min=0.97)


def test_the_child_records_why_and_how_as_fields() -> None:
    why = float64_error()
    record = child_record(why)
    assert record["status"] == "pass" and record["reference"] == "none"
    assert record["reference_error"] == why
    assert record["compared_by"] == "allclose_else_cosine" and record["cosine_min"] == 0.97
    # through the reading door (the schema validates it) to the words
    text = flat(render_run_text(parse(with_numerics(lambda: child_record(why)), "r.json")))
    assert f"({why}): compiled compared with eager by allclose, else cosine ≥ 0.97 only" in text


def test_the_child_cuts_a_long_reason_to_the_schemas_bound() -> None:
    long_why = "its loss differs from eager's " + "by a great deal " * 40
    record = child_record(long_why)
    assert record["reference_error"] == long_why[:240]
    parse(with_numerics(lambda: child_record(long_why)), "r.json")  # maxLength 240 holds


def test_the_child_records_a_check_with_its_reference() -> None:
    record = child_record(None)
    assert record["reference"] == "float64" and "reference_error" not in record
    assert record["compared_by"] == "allclose_else_fp64_rmse" and record["cosine_min"] == 0.97
