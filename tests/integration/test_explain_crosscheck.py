"""Our graph-break sites agree with torch._dynamo.explain on real models, on each torch.

explain executes the function once (and resets Dynamo around it), so it runs in its own
subprocess of the same interpreter, on a separate copy of the step, never inside a measurement.
compilegate compiles the model (compile target "model"), so explain traces the model called
with the arguments the step's loss gives it (`model(x)`, `model(input_ids=..., labels=...)`).
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
path, function = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(path))  # step files import sibling helpers
spec = importlib.util.spec_from_file_location("explain_target", path)
module = importlib.util.module_from_spec(spec)
sys.modules["explain_target"] = module
spec.loader.exec_module(module)
torch.manual_seed(0)
parts = getattr(module, function)(device="cpu")
model, calls = parts["model"], []
def recording(*args, **kwargs):  # the arguments the step's loss calls the model with
    calls.append((args, kwargs))
    return model(*args, **kwargs)
parts["loss"](recording, parts["batch"](0))
args, kwargs = calls[0]
out = torch._dynamo.explain(model)(*args, **kwargs)
breaks = []
for reason in out.break_reasons:
    first, last = reason.user_stack[0], reason.user_stack[-1]
    breaks.append({
        "split": [first.filename, first.lineno],
        "innermost": [last.filename, last.lineno],
        "reason": reason.reason[:200],
    })
print("EXPLAIN " + json.dumps({"graph_break_count": out.graph_break_count, "breaks": breaks}))
"""


def shown(file: str) -> str:
    """Repo-relative, or package-relative past site-packages: as compilegate shows files."""
    if "site-packages/" in file:
        return file.rsplit("site-packages/", 1)[1]
    return os.path.relpath(file, REPO_ROOT)


def run_explain(python: str, step_file: str, tmp_path, function: str = "make_step") -> dict:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    env.pop("TORCH_LOGS", None)
    done = subprocess.run(
        [python, "-c", EXPLAIN, str(REPO_ROOT / "examples/test_steps" / step_file), function],
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


@pytest.mark.parametrize(
    ("step", "breaks"), [("item_branch", 2), ("print_in_forward", 2), ("hf_gpt2", 1)]
)
def test_graph_break_sites_match_explain(diagnostics_run, step, breaks, tmp_path):
    """One site per break, where explain's graph ended: the first frame of its stack. Where
    explain names the innermost frame with the real reason, that is our cause (on torch 2.13
    GPT-2's one entry is the "step_unsupported" split in forward: its cause is only ours)."""
    ours = diagnostics_run.variant(step)["graph_breaks"]
    explained = run_explain(diagnostics_run.python, f"{step}.py", tmp_path)
    gated = [s for s in ours["sites"] if s["origin"] in ("repo", "library")]
    explain_splits = sorted({(shown(b["split"][0]), b["split"][1]) for b in explained["breaks"]})
    assert sorted((s["file"], s["line"]) for s in gated) == explain_splits, (ours, explained)
    assert ours["count"] == explained["graph_break_count"] == len(explain_splits) == breaks
    causes = {(s["file"], s["line"]): (s["cause"]["file"], s["cause"]["line"]) for s in gated}
    for entry in explained["breaks"]:
        if entry["reason"] != "step_unsupported":
            split = (shown(entry["split"][0]), entry["split"][1])
            assert causes[split] == (shown(entry["innermost"][0]), entry["innermost"][1])
