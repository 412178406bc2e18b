"""A numerics check that ran without its float64 reference says so wherever its verdict is
shown (issue 54, finding 5): a diffusion transformer hard-coding float32 in its timestep
embedding could not run in float64, the check fell back to allclose/cosine against eager,
and only the result JSON said it — the terminal and the comment said "pass"."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from gate_docs import result, step, variant
from report_runs import judge

from compilegate.report.comment import render_comment
from compilegate.report.run_set_text import render_run_set_text
from compilegate.report.run_text import render_run_text
from compilegate.results.model import parse

WHY = "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Double"
REASON = f"no float64 reference ({WHY}); judged by allclose, else cosine >= 0.99"
FALLBACK = "compiled compared with eager by allclose, else cosine ≥ 0.99 only"


def numerics(status: str = "pass", reference: str = "none", **extra: Any) -> dict[str, Any]:
    reason = REASON if reference == "none" else None
    if extra.get("failed"):
        failed = extra["failed"]
        reason = f"{len(failed)} of 85 tensors differ beyond tolerance: {', '.join(failed)}" + (
            f"; {REASON}" if reference == "none" else ""
        )
    return {"status": status, "reference": reference, "reason": reason, **extra}


def document(**checked: Any) -> dict[str, Any]:
    """A DiT step with two variants, both checked as `checked` says."""
    variants = [variant(), variant("reduce-overhead", mode="reduce-overhead")]
    for entry in variants:
        entry["numerics"] = numerics(**checked)
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
