"""Issue 29, finding 2: deleting one config line must not hide a regression against a stored
baseline. The baseline is recorded with `epoch: {length: 100}`; the pull request makes the
epoch's last batch smaller (a recompile at every epoch end) and deletes the line. Before,
the run measured no epoch end and the gate read "recompiles 0 → 0", exit 0.

Real runs through the CLI, real torch.compile (backend eager: the recompile is Dynamo's,
and it compiles in about a second), each side its own checkout with the same entry:
- `run --baseline` measures with the baseline's epoch (adopted, in a note) and fails the
  gate on the recompile, exit 1;
- a result measured with the pull request's config as written — what each version's run
  in `matrix --baseline` (the action's `against: none`) makes — is judged `incomparable`,
  naming `epoch_length`, exit 4: never a silent pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, run_cli

pytestmark = pytest.mark.compile

# examples/test_steps/epoch_end_batch.py: 16 rows a batch, 7 at every epoch's last index.
HEAD_CODE = (REPO_ROOT / "examples/test_steps/epoch_end_batch.py").read_text()
BASE_CODE = HEAD_CODE.replace("ROWS, LAST_ROWS = 16, 7", "ROWS, LAST_ROWS = 16, 16")
STEP = (
    "version: 1\nsteps:\n  - name: epoch\n    entry: steps/epoch_step.py:make_step\n"
    "    variants: [{backend: eager}]\n    warmup: 2\n    iterations: 4\n    rounds: 2\n"
    "    variant_processes: 1\n    threads: 1\n    numerics: {enabled: false}\n"
)
EPOCH_LINE = "    epoch: {length: 100}\n"


def checkout(root: Path, code: str, config: str) -> Path:
    (root / "steps").mkdir(parents=True)
    (root / "steps/epoch_step.py").write_text(code)
    (root / "compilegate.yml").write_text(config)
    return root


def measure(root: Path, out: Path, *extra: str):
    return run_cli(
        "run", "--config", str(root / "compilegate.yml"), "--repo", str(root), "--out", str(out),
        *extra,
    )  # fmt: skip


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("epoch-policy")
    assert BASE_CODE != HEAD_CODE
    base = checkout(tmp / "base", BASE_CODE, STEP + EPOCH_LINE)
    head = checkout(tmp / "head", HEAD_CODE, STEP)  # the pull request deleted the line
    recorded = measure(base, tmp / "baseline.json")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr[-3000:]
    (variant,) = recorded.result["steps"][0]["variants"]
    assert variant["recompiles"]["count"] == 0, "the base's epoch end does not recompile"
    assert recorded.result["steps"][0]["settings"]["epoch_length"] == 100
    return tmp, head, tmp / "baseline.json"


def test_run_against_the_baseline_measures_its_epoch_and_fails(sides) -> None:
    tmp, head, baseline = sides
    run = measure(head, tmp / "head.json", "--baseline", str(baseline))
    assert run.returncode == 1, run.stdout + run.stderr[-3000:]
    assert "measured with the baseline's epoch_length 100 (config: None)" in words(run.stderr)
    assert "recompiles 0 → 1" in words(run.stdout), run.stdout
    assert run.result["steps"][0]["settings"]["epoch_length"] == 100


def test_a_result_without_the_epoch_is_not_judged(sides) -> None:
    tmp, head, baseline = sides
    own = measure(head, tmp / "head-own.json")  # the config as the pull request wrote it
    assert own.returncode == 0, own.stdout + own.stderr[-3000:]
    assert own.result["steps"][0]["variants"][0]["recompiles"]["count"] == 0  # unseen
    judged = run_cli("compare", "--baseline", str(baseline), "--result", str(tmp / "head-own.json"))
    assert judged.returncode == 4, judged.stdout + judged.stderr[-3000:]
    assert "epoch_length 100 → None" in words(judged.stdout), judged.stdout
