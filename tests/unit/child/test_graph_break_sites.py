"""One graph break, one site (graph_break_sites.py), on snapshots of real runs.

tests/unit/data/graph_breaks_*.json are CompileProbe snapshots (graph-break log records,
graph_break_reasons with their stacks, CompilationMetrics) of a tiny Hugging Face GPT-2
(transformers 5.24, torch 2.13) and of examples/test_steps/print_in_forward.py (torch 2.13
and 2.4.1), with the machine's paths replaced by /repo, /venv/lib/python3.11/site-packages
and /usr/lib/python3.11. No torch needed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from child_said import said

from compilegate.child.diagnostics_report import build_report
from compilegate.child.dynamo_logs import PathClassifier

DATA = Path(__file__).parents[1] / "data"
SITE_PACKAGES = "/venv/lib/python3.11/site-packages"
PRINT_STEP = "examples/test_steps/print_in_forward.py"


def paths() -> PathClassifier:
    return PathClassifier(
        "/repo",
        {"torch": f"{SITE_PACKAGES}/torch", "compilegate": "/repo/runner/compilegate"},
        [SITE_PACKAGES, "/usr/lib/python3.11"],
    )


def snapshot(name: str) -> dict:
    return json.loads((DATA / f"graph_breaks_{name}.json").read_text())


def shape(site: dict) -> tuple:
    cause = site["cause"]
    return (site["file"], site["line"], cause["file"], cause["line"], site["origin"])


def test_gpt2_warning_once_in_loss_function_is_one_site_in_the_library():
    """Four frame compiles saw the break (wrapper, wrapped_func, forward, loss_function); only
    forward's graph was cut (59 ops). Before: two sites, `modeling_utils.py:4778` and
    `modeling_gpt2.py:703` with the reason "step_unsupported"."""
    report = build_report(snapshot("gpt2_213"), paths())
    breaks = report["graph_breaks"]
    assert breaks["count"] == 1
    (site,) = breaks["sites"]
    assert shape(site) == (
        "transformers/models/gpt2/modeling_gpt2.py",
        703,
        "transformers/modeling_utils.py",
        4778,
        "library",
    )
    assert (site["function"], site["cause"]["function"]) == ("forward", "loss_function")
    assert site["reason"].startswith("logging.Logger method not supported")
    assert site["cause"]["reason"] == site["reason"] and site["count"] == 1
    assert site["in_repo"] is False
    assert said(report)[0] == [
        "1 graph break in installed libraries (transformers/models/gpt2/modeling_gpt2.py:703 "
        "-> transformers/modeling_utils.py:4778 logging.Logger method not supported for "
        "non-export cases)"
    ]
    text = json.dumps(report)
    assert SITE_PACKAGES not in text and "site-packages" not in text and "/repo" not in text


@pytest.mark.parametrize("version", ["213", "24"])
def test_print_in_an_inlined_helper_is_reported_where_the_graph_was_cut(version):
    """PrintNet.forward -> Encoder.forward -> show_stats(print): Encoder.forward's graph (fc,
    tanh) is the one cut, at its call of show_stats; explain() names the same place."""
    breaks = build_report(snapshot(f"print_in_forward_{version}"), paths())["graph_breaks"]
    assert [shape(s) for s in breaks["sites"]] == [
        (PRINT_STEP, 24, PRINT_STEP, 14, "repo"),
        (PRINT_STEP, 34, PRINT_STEP, 34, "repo"),
    ]
    assert breaks["count"] == 2
    assert [s["function"] for s in breaks["sites"]] == ["forward", "forward"]
    assert [s["cause"]["function"] for s in breaks["sites"]] == ["show_stats", "forward"]
    assert all(s["count"] == 1 for s in breaks["sites"])
    # 2.4 names the explicit break "skip function graph_break in file /abs/.../decorators.py"
    assert all("/venv" not in s["reason"] for s in breaks["sites"])


def test_without_op_counts_the_one_break_is_still_one_site_at_its_cause():
    """torch 2.1-2.2 (no CompilationMetrics), or a metrics deque that overflowed."""
    no_metrics = {**snapshot("gpt2_213"), "metrics": []}
    overflowed = {**snapshot("gpt2_213"), "metrics_complete": False}
    for snap in (no_metrics, overflowed):
        (site,) = build_report(snap, paths())["graph_breaks"]["sites"]
        assert shape(site) == (
            "transformers/modeling_utils.py",
            4778,
            "transformers/modeling_utils.py",
            4778,
            "library",
        )


def entry(reason: str, *frames: tuple[str, int, str]) -> dict:
    return {
        "reason": reason,
        "stack": [{"file": f, "line": n, "function": fn} for f, n, fn in frames],
    }


def metric(compile_id: str, file: str, function: str, first_line: int, ops: int) -> dict:
    return {
        "compile_id": compile_id,
        "co_name": function,
        "co_filename": file,
        "co_firstlineno": first_line,
        "graph_op_count": ops,
    }


HARNESS = "/repo/runner/compilegate/child/training.py"
LOSS = "/repo/steps/train.py"
OPTIMIZER = f"{SITE_PACKAGES}/torch/optim/optimizer.py"


def test_torch_internal_breaks_are_listed_but_not_counted():
    """compile: step also compiles optimizer.step; its own graph_break() is torch's."""
    snap = {
        "break_reasons": [
            entry(
                "Call to `torch._dynamo.graph_break()`",
                (HARNESS, 90, "optimizer_step"),
                (OPTIMIZER, 79, "_use_grad"),
            ),
            entry("Call to `torch._dynamo.graph_break()`", (OPTIMIZER, 79, "_use_grad")),
        ],
        "metrics": [
            metric("0/0", HARNESS, "optimizer_step", 89, 0),
            metric("1/0", OPTIMIZER, "_use_grad", 70, 0),
        ],
    }
    breaks = build_report(snap, paths())["graph_breaks"]
    assert breaks["count"] == 0
    (site,) = breaks["sites"]
    assert shape(site) == ("torch/optim/optimizer.py", 79, "torch/optim/optimizer.py", 79, "torch")
    assert site["count"] == 1


def test_compilegates_loop_is_never_the_site_the_users_first_frame_is():
    """compile: step traces compilegate's forward_and_loss: a graph cut there is shown in the
    user's loss function, the outermost frame that is theirs."""
    snap = {
        "break_reasons": [
            entry(
                "Unsupported Tensor.item() call",
                (HARNESS, 70, "forward_and_loss"),
                (LOSS, 12, "loss"),
                ("/repo/steps/model.py", 30, "forward"),
            ),
        ],
        "metrics": [metric("0/0", HARNESS, "forward_and_loss", 69, 3)],
    }
    (site,) = build_report(snap, paths())["graph_breaks"]["sites"]
    assert shape(site) == ("steps/train.py", 12, "steps/model.py", 30, "repo")


def test_one_cause_reached_from_two_call_paths_is_two_sites():
    helper = ("/repo/steps/model.py", 5, "show")
    snap = {
        "break_reasons": [
            entry("print", ("/repo/steps/model.py", 20, "encode"), helper),
            entry("print", ("/repo/steps/model.py", 40, "decode"), helper),
        ],
        "metrics": [
            metric("0/0", "/repo/steps/model.py", "encode", 18, 2),
            metric("1/0", "/repo/steps/model.py", "decode", 38, 2),
        ],
    }
    breaks = build_report(snap, paths())["graph_breaks"]
    assert [(s["line"], s["cause"]["line"]) for s in breaks["sites"]] == [(20, 5), (40, 5)]
    assert breaks["count"] == 2


def test_a_recompiled_frame_counts_each_compile_at_one_site():
    snap = copy.deepcopy(snapshot("print_in_forward_213"))
    snap["break_reasons"].append(copy.deepcopy(snap["break_reasons"][1]))  # Encoder again
    snap["metrics"].append({**snap["metrics"][1], "compile_id": "1/1"})
    breaks = build_report(snap, paths())["graph_breaks"]
    assert [(s["line"], s["count"]) for s in breaks["sites"]] == [(24, 2), (34, 1)]


def test_a_ddp_split_under_torch_2_4_is_not_a_graph_break_site():
    """torch 2.4.1 lists each split DDP's optimizer makes at a gradient-bucket boundary among
    graph_break_reasons, with line 0 and the DDPOptimizer class itself as the frame's function
    (verbatim shape, ddp_mlp.py at bucket_cap_mb 2): the splits are counted apart
    (child/distributed.py) and must never show as graph breaks. The class once crashed the
    diagnostics ("TypeError: expected string or bytes-like object")."""

    class DDPOptimizer:  # what 2.4.1 puts where a function name belongs
        pass

    split = {
        "reason": "DDPOptimizer intentional graph-break (See Note [DDPOptimizer]). Set "
        "`torch._dynamo.config.optimize_ddp = False` to disable.",
        "stack": [
            {
                "file": f"{SITE_PACKAGES}/torch/_dynamo/backends/distributed.py",
                "line": 0,
                "function": DDPOptimizer,
            }
        ],
    }
    odd_name = {
        "reason": "call_method UserDefinedObjectVariable(instancemethod) __call__ [] {}",
        "stack": [{"file": "/repo/model.py", "line": 12, "function": DDPOptimizer}],
    }
    snap = {"records": [], "break_reasons": [split, split, split, odd_name], "metrics": []}
    report = build_report(snap, paths())
    sites = report["graph_breaks"]["sites"]
    assert [(site["file"], site["line"], site["function"]) for site in sites] == [
        ("model.py", 12, "DDPOptimizer")
    ]
    assert report["graph_breaks"]["count"] == 1
