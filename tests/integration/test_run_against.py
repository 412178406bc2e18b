"""`compilegate run --against REF` on a real repository, with real torch.compile: the base
commit and the pull request's commit measured in one job, alternating, the pull request's
config asking for less power and looser thresholds, its code for a slower compiled step."""

from __future__ import annotations

import json

import pytest
from cli_helpers import REPO_ROOT, run_cli

from repo_helpers import git

pytestmark = pytest.mark.compile

CONFIG = """\
version: 1
steps:
  - name: gate
    entry: step.py:make_step
    device: cpu
    variants: [{{mode: default}}]
    warmup: 2
    iterations: 64
    rounds: 4
    threads: 1
    eager_processes: 1
    variant_processes: {processes}
    numerics: {{enabled: false}}
{extra}"""
HOSTILE = (
    "    thresholds: {compiled_step_time_growth_pct: 1000, speedup_drop_pct: 1000,\n"
    "                 step_time_quantile_growth_pct: 1000}\n"
)
# Four pairs, not two: a paired interval has pairs - 1 degrees of freedom, and with one
# (t = 12.7) a head four times slower read `inconclusive` on a busy CI machine whose two
# pairs disagreed by half (+326 % at ±2939 %); with three, t = 3.2.
BASE_PROCESSES = 4
SLOWER = "PLANT_COMPILED_MS = 2.0  # the pull request's change: 2 ms more per compiled step\n"


@pytest.fixture(scope="module")
def paired_run(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("against")
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    source = (REPO_ROOT / "examples/test_steps/gate_step.py").read_text()
    (repo / "step.py").write_text(source)
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "compilegate.yml").write_text(CONFIG.format(processes=BASE_PROCESSES, extra=""))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    planted = source.replace(
        'PLANT_COMPILED_MS = float(os.environ.get("COMPILEGATE_PLANT_COMPILED_MS", "0"))\n', SLOWER
    )
    assert planted != source
    (repo / "step.py").write_text(planted)
    (repo / "compilegate.yml").write_text(CONFIG.format(processes=1, extra=HOSTILE))
    git(repo, "commit", "-qam", "head: a slower compiled step, and a config to hide it")
    out = tmp / "out" / "result.json"
    run = run_cli(
        "run",
        *("--config", str(repo / "compilegate.yml"), "--against", "HEAD~1"),
        *("--out", str(out)),
        cwd=tmp,
    )
    return repo, run, out


def test_the_slower_head_fails_against_its_base_despite_its_own_config(paired_run) -> None:
    _, run, _ = paired_run
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    text = " ".join(run.stdout.split())
    assert "compiled step time" in text and "base" in text
    assert f"paired, {BASE_PROCESSES} pairs, same machine" in text
    assert "measured with the base's settings" in run.stderr
    assert "baseline update" not in text


def test_both_sides_are_recorded_with_the_base_policy(paired_run) -> None:
    repo, run, out = paired_run
    head = run.result
    base = json.loads(out.with_name("result.base.json").read_text())
    assert head["pairing"]["id"] == base["pairing"]["id"]
    assert head["environment"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert base["environment"]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()
    settings = head["steps"][0]["settings"]
    assert settings["variant_processes"] == BASE_PROCESSES, "a pull request cannot ask for less"
    assert len(head["steps"][0]["variants"][0]["processes"]) == BASE_PROCESSES
    assert settings["thresholds"]["compiled_step_time_growth_pct"] == 1000  # asked, shown
    assert base["steps"][0]["settings"]["thresholds"]["compiled_step_time_growth_pct"] == 5


def test_the_base_worktree_is_gone_after_the_run(paired_run) -> None:
    repo, _, _ = paired_run
    assert len(git(repo, "worktree", "list").splitlines()) == 1
