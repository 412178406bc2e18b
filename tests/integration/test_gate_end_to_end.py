"""The gate on real runs: a baseline from unchanged code, then planted regressions.

Uses torch.compile with backend "eager" (Dynamo only): graph breaks, recompiles and a
compiled-only numerics change are all Dynamo's doing, and it compiles in about a second.
"""

from __future__ import annotations

import pytest
from cli_helpers import REPO_ROOT, run_cli, write_config

pytestmark = pytest.mark.compile

BREAK_LINE = 1 + (REPO_ROOT / "examples/test_steps/gate_step.py").read_text().splitlines().index(
    "            torch._dynamo.graph_break()"
)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("gate")
    config = write_config(
        tmp / "compilegate.yml",
        "  - name: gate\n    entry: examples/test_steps/gate_step.py:make_step\n"
        "    variants: [{backend: eager}]\n    warmup: 2\n    iterations: 20\n    rounds: 4\n"
        "    threads: 1\n    env: [COMPILEGATE_PLANT]\n",  # the child sees only what is listed
    )
    first = run_cli(
        "run",
        "--config",
        str(config),
        "--repo",
        str(REPO_ROOT),
        "--out",
        str(tmp / "base-result.json"),
    )
    assert first.returncode == 0, first.stderr[-3000:]
    baseline = tmp / "baseline.json"
    update = run_cli(
        "baseline", "update", "--result", str(tmp / "base-result.json"), "--baseline", str(baseline)
    )
    assert update.returncode == 0, update.stderr

    def run(plant: str = "", *extra: str):
        return run_cli(
            "run",
            "--config",
            str(config),
            "--repo",
            str(REPO_ROOT),
            "--out",
            str(tmp / f"result-{plant or 'same'}.json"),
            "--baseline",
            str(baseline),
            *extra,
            env={"COMPILEGATE_PLANT": plant},
        )

    return run


def regression_rows(stdout: str) -> list[str]:
    """Table rows whose verdict column says REGRESSION."""
    return [line for line in stdout.splitlines() if line.rstrip().endswith("REGRESSION")]


def test_unchanged_code_is_not_a_regression(gate) -> None:
    run = gate()
    assert run.returncode == 0, run.stdout + run.stderr[-2000:]
    assert regression_rows(run.stdout) == []
    assert "the job fails" not in run.stdout


@pytest.mark.parametrize(
    ("plant", "metric", "message"),
    [
        (
            "graph_break",
            "graph_break_sites",
            f"new graph break at examples/test_steps/gate_step.py:{BREAK_LINE}",
        ),
        ("recompile", "recompiles", "recompiles 0 → 1"),
        ("numerics", "numerics", "numerics"),
    ],
)
def test_planted_regression_fails_the_gate(gate, plant: str, metric: str, message: str) -> None:
    run = gate(plant)
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert any(f" {metric} " in row for row in regression_rows(run.stdout)), run.stdout
    assert message in run.stdout
