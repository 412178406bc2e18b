"""`compilegate run --against REF --pairing in-process` on a real repository, with real
torch.compile (issue 28): the eager reference and the variant's warm timing processes hold
the base's and the head's step in one child, both imported as step.py from their own trees;
the documents say so, and a head whose compiled step is slower fails on it."""

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
    variants: [{mode: default}]
    warmup: 2
    iterations: 64
    rounds: 4
    threads: 1
    eager_processes: 1
    variant_processes: 3
    numerics: {enabled: false}
"""
SLOWER = "PLANT_COMPILED_MS = 2.0  # the pull request's change: 2 ms more per compiled step\n"


def test_base_and_head_in_one_process_catch_a_slower_compiled_step(tmp_path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    source = (REPO_ROOT / "examples/test_steps/gate_step.py").read_text()
    (repo / "step.py").write_text(source)
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "compilegate.yml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    planted = source.replace(
        'PLANT_COMPILED_MS = float(os.environ.get("COMPILEGATE_PLANT_COMPILED_MS", "0"))\n', SLOWER
    )
    assert planted != source
    (repo / "step.py").write_text(planted)
    git(repo, "commit", "-qam", "head: a slower compiled step")
    out = tmp_path / "out" / "result.json"
    run = run_cli(
        "run",
        *("--config", str(repo / "compilegate.yml"), "--against", "HEAD~1"),
        *("--pairing", "in-process", "--out", str(out)),
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    head, base = run.result, json.loads(out.with_name("result.base.json").read_text())
    for document in (head, base):
        assert validation_errors(document, "result") == []
        assert document["pairing"]["mode"] == "in-process"
    assert "base and head in one process" in run.stderr
    text = " ".join(run.stdout.split())
    assert "paired, 3 pairs, in one process, same machine" in text
    assert "compiled step time" in text
    # Each side ran its own step.py in the shared child: the head's compiled iterations
    # busy-wait 2 ms (a floor, not a race), the base's, the same file without the plant, not.
    variant = {d["pairing"]["role"]: d["steps"][0]["variants"][0] for d in (head, base)}
    for later in (1, 2):  # the warm timing processes, both sides in one child
        head_ms = variant["head"]["processes"][later]["fastest_ms"]["compiled"]
        base_ms = variant["base"]["processes"][later]["fastest_ms"]["compiled"]
        assert head_ms >= 2.0 > base_ms, (later, head_ms, base_ms)
        assert variant["head"]["processes"][later]["compile_wall_s"] is None
        assert set(variant["head"]["processes"][later]["head_vs_base"]) == {"eager", "compiled"}
    assert "head_vs_base" not in variant["head"]["processes"][0]  # the cold compiles alternate
    assert "head_vs_base" in head["steps"][0]["eager"]["processes"][0]
