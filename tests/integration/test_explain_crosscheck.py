"""Our graph-break sites agree with torch._dynamo.explain on real models, on each torch.

explain executes the function once (and resets Dynamo around it), so it runs in its own
subprocess of the same interpreter, on a separate copy of the step, never inside a measurement.
compilegate compiles the model (compile target "model"), so explain traces `model(x)`.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from cli_helpers import REPO_ROOT

pytestmark = pytest.mark.compile

EXPLAIN = """
import importlib.util, json, os, sys
import torch, torch._dynamo
path, repo = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(path))  # step files import sibling helpers
spec = importlib.util.spec_from_file_location("explain_target", path)
module = importlib.util.module_from_spec(spec)
sys.modules["explain_target"] = module
spec.loader.exec_module(module)
torch.manual_seed(0)
parts = module.make_step(device="cpu")
inputs = parts["batch"](0)
out = torch._dynamo.explain(parts["model"])(inputs[0])
sites = []
for reason in out.break_reasons:
    frame = reason.user_stack[-1]
    sites.append([os.path.relpath(frame.filename, repo), frame.lineno, reason.reason[:200]])
print("EXPLAIN " + json.dumps({"graph_break_count": out.graph_break_count, "sites": sites}))
"""


def run_explain(python: str, step_file: str, tmp_path) -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    env.pop("TORCH_LOGS", None)
    done = subprocess.run(
        [python, "-c", EXPLAIN, str(REPO_ROOT / "examples/test_steps" / step_file), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
        cwd=REPO_ROOT,
    )
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("EXPLAIN ")), None)
    assert done.returncode == 0 and line, done.stderr[-2000:]
    return json.loads(line[len("EXPLAIN ") :])


@pytest.mark.parametrize("step", ["item_branch", "print_in_forward"])
def test_graph_break_sites_match_explain(diagnostics_run, step, tmp_path):
    ours = diagnostics_run.variant(step)["graph_breaks"]
    explained = run_explain(diagnostics_run.python, f"{step}.py", tmp_path)
    explain_sites = sorted({(file, line) for file, line, _ in explained["sites"]})
    our_sites = sorted((s["file"], s["line"]) for s in ours["sites"] if s["in_repo"])
    assert our_sites == explain_sites, (ours, explained)
    assert ours["count"] == explained["graph_break_count"] == len(explain_sites) == 2
