"""Host syncs on a CPU, for real (issue 54, finding 2): `compilegate run` in its own
processes (Dynamo's eager backend, no Inductor compile) on steps under AdamW and SGD with
momentum. An optimizer's host-side counters (AdamW's `step`, read with `.item()` at
torch/optim/optimizer.py's `_get_value`) are no host sync; an added layer moves the FLOPs and
not the syncs; a user's `.item()` in the loss is one, named at its line.

Adam(capturable=True) cannot step on a CPU (torch 2.13: "params and state_steps must be on
supported devices: cuda, xpu, hpu, privateuseone, xla"): its rule, a capturable group's
counter is never left out, is checked on the classification
(tests/unit/child/test_host_syncs_on_cpu.py).
"""

from __future__ import annotations

import copy

import pytest
from cli_helpers import QUICK_STEP_SETTINGS, run_cli, write_config

from compilegate.gate.compare import compare_to_baseline
from compilegate.report.row_words import row_message
from compilegate.results.model import parse

STEPS = """\
import torch


def factory(optimizer_of, plant=""):
    def make_step(device="cpu"):
        torch.manual_seed(0)
        layers = [torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)]
        if plant == "layer":
            layers += [torch.nn.ReLU(), torch.nn.Linear(4, 4)]
        model = torch.nn.Sequential(*layers).to(device)
        xs, ys = torch.randn(4, 8, 16), torch.randint(0, 4, (4, 8))

        def loss(model, inputs):
            out = model(inputs[0])
            if plant == "item":
                out.sum().item()
            return torch.nn.functional.cross_entropy(out, inputs[1])

        return {
            "model": model,
            "optimizer": optimizer_of(model.parameters()),
            "batch": lambda i: (xs[i % 4].to(device), ys[i % 4].to(device)),
            "loss": loss,
        }

    return make_step


adamw = factory(torch.optim.AdamW)
adamw_layer = factory(torch.optim.AdamW, "layer")
adamw_item = factory(torch.optim.AdamW, "item")
sgd = factory(lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9))
"""
pytestmark = pytest.mark.compile  # Dynamo with its eager backend: no Inductor compile

NAMES = ("adamw", "adamw_layer", "adamw_item", "sgd")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict:
    repo = tmp_path_factory.mktemp("optimizers")
    (repo / "steps.py").write_text(STEPS)
    body = "".join(
        f"  - name: {name}\n    entry: steps.py:{name}\n    threads: 1\n" + QUICK_STEP_SETTINGS
        for name in NAMES
    )
    config = write_config(repo / "compilegate.yml", body)
    run = run_cli(
        "run", "--config", str(config), "--repo", str(repo), "--out", str(repo / "result.json")
    )
    assert run.result is not None, run.stderr[-3000:]
    steps = {step["name"]: step for step in run.result["steps"]}
    assert all(steps[name]["status"] == "ok" for name in NAMES), run.stderr[-3000:]
    return run.result


def sides(step: dict) -> dict[str, dict]:
    return {"eager": step["eager"]["step_work"]} | {
        v["id"]: v["step_work"] for v in step["variants"]
    }


def as_step(document: dict, name: str) -> dict:
    """`document` with only step `name`, called `adamw`: the same step in a later commit."""
    out = copy.deepcopy(document)
    (step,) = [s for s in out["steps"] if s["name"] == name]
    step["name"], step["entry"] = "adamw", "steps.py:adamw"  # its config, unchanged
    out["steps"] = [step]
    return out


def step_work_rows(measured: dict, name: str) -> list[str]:
    report = compare_to_baseline(
        parse(as_step(measured, "adamw"), "base.json"), parse(as_step(measured, name), "head")
    )
    return [f"{row.verdict}: {row_message(row)}" for row in report.rows(metric="step_work")]


def test_an_optimizers_counters_are_no_host_sync(measured: dict) -> None:
    steps = {step["name"]: step for step in measured["steps"]}
    for name in ("adamw", "adamw_layer", "sgd"):
        for side, work in sides(steps[name]).items():
            assert work["counts"]["host_syncs"] == 0, (name, side, work["top"])
    # The counters are read all the same: AdamW dispatches one `.item()` per parameter.
    ops = dict(steps["adamw"]["eager"]["step_work"]["top"]["aten_ops"])
    assert ops["aten::_local_scalar_dense"] == 4
    assert steps["adamw"]["eager"]["step_work"]["sync_sites"] == []


def test_an_added_layer_moves_the_flops_not_the_host_syncs(measured: dict) -> None:
    steps = {step["name"]: step for step in measured["steps"]}
    for side, work in sides(steps["adamw_layer"]).items():
        assert work["counts"]["flops"] > sides(steps["adamw"])[side]["counts"]["flops"], side
    rows = step_work_rows(measured, "adamw_layer")
    assert rows and all(row.startswith("regression") for row in rows), rows  # more work
    assert not any("host sync" in row for row in rows), rows


def test_a_users_item_is_one_host_sync_named_at_its_line(measured: dict) -> None:
    line = 1 + STEPS.splitlines().index("                out.sum().item()")
    steps = {step["name"]: step for step in measured["steps"]}
    for side, work in sides(steps["adamw_item"]).items():
        assert work["counts"]["host_syncs"] == 1, side
    assert steps["adamw_item"]["eager"]["step_work"]["sync_sites"] == [[f"steps.py:{line}", 1]]
    rows = step_work_rows(measured, "adamw_item")
    failing = [row for row in rows if row.startswith("regression") and "host syncs 0 → 1" in row]
    assert failing and f"steps.py:{line}" in failing[0], rows
