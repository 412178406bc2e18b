"""`compilegate run --against REF --pairing in-process` on a real repository, with real
torch.compile: the base commit and the pull request's commit measured in one job, the pull
request's config asking for less power and looser thresholds, its code for a slower compiled
step. The eager reference and the variant's warm timing processes hold the base's and the
head's step in one child (issue 28), both imported as step.py from their own trees.

One run serves every test here. It was two (this file's, in separate processes, and
test_run_against_in_process.py's, with the same step and plant): the default pairing (a
process per side) is proven on real children by test_versions_paired.py and the container
tests (containers/test_paired_docker.py, containers/test_action_steps.py), and its schedule
by test_paired_run.py; CONTRIBUTING.md lists what each folded test proved.
"""

from __future__ import annotations

import json

import pytest
from cli_helpers import REPO_ROOT, run_cli

from compilegate.schemas import validation_errors
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
        *("--pairing", "in-process", "--out", str(out)),
        cwd=tmp,
    )
    return repo, run, out


def test_the_slower_head_fails_against_its_base_despite_its_own_config(paired_run) -> None:
    _, run, _ = paired_run
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    text = " ".join(run.stdout.split())
    assert "compiled step time" in text and "base" in text
    assert f"paired, {BASE_PROCESSES} pairs, in one process, same machine" in text
    assert "measured with the base's settings" in run.stderr
    assert "baseline update" not in text


def test_both_sides_are_recorded_with_the_base_policy(paired_run) -> None:
    repo, run, out = paired_run
    head = run.result
    base = json.loads(out.with_name("result.base.json").read_text())
    for document in (head, base):
        assert validation_errors(document, "result") == []
        assert document["pairing"]["mode"] == "in-process"
    assert head["pairing"]["id"] == base["pairing"]["id"]
    assert head["environment"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert base["environment"]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()
    settings = head["steps"][0]["settings"]
    assert settings["variant_processes"] == BASE_PROCESSES, "a pull request cannot ask for less"
    assert len(head["steps"][0]["variants"][0]["processes"]) == BASE_PROCESSES
    assert settings["thresholds"]["compiled_step_time_growth_pct"] == 1000  # asked, shown
    assert base["steps"][0]["settings"]["thresholds"]["compiled_step_time_growth_pct"] == 5


def test_base_and_head_in_one_process_each_run_their_own_step(paired_run) -> None:
    """Each side ran its own step.py in the shared child: the head's compiled iterations
    busy-wait 2 ms (a floor, not a race), the base's, the same file without the plant, not."""
    _, run, out = paired_run
    head, base = run.result, json.loads(out.with_name("result.base.json").read_text())
    assert "base and head in one process" in run.stderr
    variant = {d["pairing"]["role"]: d["steps"][0]["variants"][0] for d in (head, base)}
    for later in range(1, BASE_PROCESSES):  # the warm timing processes, both sides in one child
        head_ms = variant["head"]["processes"][later]["fastest_ms"]["compiled"]
        base_ms = variant["base"]["processes"][later]["fastest_ms"]["compiled"]
        assert head_ms >= 2.0 > base_ms, (later, head_ms, base_ms)
        assert variant["head"]["processes"][later]["compile_wall_s"] is None
        assert set(variant["head"]["processes"][later]["head_vs_base"]) == {"eager", "compiled"}
    assert "head_vs_base" not in variant["head"]["processes"][0]  # the cold compiles alternate
    assert "head_vs_base" in head["steps"][0]["eager"]["processes"][0]


def test_the_base_worktree_is_gone_after_the_run(paired_run) -> None:
    repo, _, _ = paired_run
    assert len(git(repo, "worktree", "list").splitlines()) == 1
