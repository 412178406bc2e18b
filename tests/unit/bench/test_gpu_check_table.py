"""bench/gpu_check.py's step-work part (issue 39): what it reads of a real document and the
table a lent GPU window leaves behind (a bench no test reads once stopped parsing `run`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from repo_helpers import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))

import gpu_check

DOCUMENT = Path(__file__).parents[1] / "data" / "step_bound" / "transformer.json"


def test_the_counts_and_bounds_of_a_real_run_are_read_and_tabled() -> None:
    document = json.loads(DOCUMENT.read_text())
    work = gpu_check.work_of(document)
    eager = document["steps"][0]["eager"]["step_work"]["counts"]
    assert work["counts"]["eager"]["aten_ops"] == eager["aten_ops"]
    assert work["counts"]["variant"]["kernels"] is None  # a CPU run: absent, not 0
    assert set(work["bounds"]) == {"eager", "default"}
    run = {"exit": 0, "seconds": 60.0, "eager_ms": 1.0, "compiled_ms": 1.0, "speedup": 1.0,
           "compile_s": 9.0, "unsteady": [], "work": work}  # fmt: skip
    other = {**run, "work": {**work, "counts": {**work["counts"], "eager": {"aten_ops": 1}}}}
    record = {"device": "cpu", "gpu": {}, "cases": [
        {"case": "example A/A, one-run baseline", "runs": [run, other], "counts_identical": False,
         "judged": [{"order": "run 2 against run 1", "compare_exit": 1,
                     "rows": {}, "step_work": {"eager": {"verdict": "regression", "message": ""},
                                               "default": {"verdict": "pass", "message": ""}}}]},
    ]}  # fmt: skip
    table = gpu_check.table_text(record)
    assert "| eager regression; default pass |" in table
    assert "example step-work counts, run 1 / run 2 (DIFFERENT):" in table
    assert f"- eager: aten_ops {eager['aten_ops']} / 1," in table
    assert "- run 1 eager bound: kind " in table


def test_the_verdict_of_a_real_pair_is_read_with_its_step_work_words() -> None:
    """What gpu_check keeps of a comparison: the speed rows and each step-work row's words."""
    document = json.loads(DOCUMENT.read_text())
    judged = gpu_check.speed_rows(document, document)
    assert judged["exit"] == 0 and set(judged["rows"]) >= {"speedup"}
    assert {row["verdict"] for row in judged["step_work"].values()} == {"pass"}
    assert all(row["message"].startswith("step work") for row in judged["step_work"].values())
