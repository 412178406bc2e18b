"""A run killed where no handler runs (SIGKILL: the OOM killer, a cancelled job) leaves a
result in which every declared step it did not finish is an error: never a result whose
missing steps read as "left out with --step" (`skipped`, exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import REPO_ROOT, run_cli, write_config

from compilegate.report.child_failure_words import said_error


def test_a_sigkilled_run_leaves_every_unfinished_step_an_error(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "compilegate.yml",
        "  - name: killer\n    entry: examples/test_steps/kills_its_compilegate.py:make_step\n"
        + QUICK
        + "  - name: after\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        + QUICK,
    )
    out = tmp_path / "result.json"
    done = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(out), timeout=300
    )
    assert done.returncode == -9, done.stdout + done.stderr  # SIGKILL: no handler ran
    document = json.loads(out.read_text())
    steps = {step["name"]: step for step in document["steps"]}
    assert set(steps) == {"killer", "after"}
    assert steps["after"]["status"] == "error"
    assert said_error(steps["after"]) == "not run: the run ended before this step"
