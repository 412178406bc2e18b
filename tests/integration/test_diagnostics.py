"""Compile diagnostics end to end: real torch.compile (Inductor, CPU) through the real runner,
on the venv's torch and on an old one (<= 2.5), where each single torch source misses
something (graph breaks at data-dependent branches, frame skips, per-instance recompiles).

One run per interpreter (conftest.diagnostics_run) serves every test here.
"""

from __future__ import annotations

import pytest
from cli_helpers import REPO_ROOT

from compilegate.report.degraded_notes import degraded_notes, fallback_reasons, limit_words
from compilegate.report.numerics_words import compared_words
from compilegate.results.model import Numerics, Variant, part_of
from compilegate.schemas import validation_errors

pytestmark = pytest.mark.compile

STEPS = "examples/test_steps"


def marked_line(file: str, marker: str, kind: str = "GRAPH BREAK") -> int:
    """The line of examples/test_steps/<file> carrying `# GRAPH BREAK: <marker>`."""
    lines = (REPO_ROOT / STEPS / file).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if f"# {kind}: {marker}" in text)


def said(variant: dict) -> tuple[list[str], list[str]]:
    """The degraded notes and fallback reasons the report words from the variant's facts."""
    typed = part_of(Variant, variant)
    return list(degraded_notes(typed)), list(fallback_reasons(typed))


def split_and_cause(site: dict) -> tuple:
    return (site["file"], site["line"], site["cause"]["file"], site["cause"]["line"])


def test_result_is_schema_valid_and_probe_output_stays_off_stderr(diagnostics_run):
    assert validation_errors(diagnostics_run.document, "result") == []
    # The probe turns on torch's DEBUG artifact logs; the child's own output must not carry them.
    assert "[__graph_breaks]" not in diagnostics_run.child_output
    assert "[__recompiles]" not in diagnostics_run.child_output
    assert "Graph break in user code at" not in diagnostics_run.child_output


def test_item_and_data_dependent_branch_are_both_reported_at_their_lines(diagnostics_run):
    variant = diagnostics_run.variant("item_branch")
    breaks = variant["graph_breaks"]
    sites = [(s["file"], s["line"]) for s in breaks["sites"] if s["in_repo"]]
    item, branch = marked_line("item_branch.py", "item"), marked_line("item_branch.py", "branch")
    assert sites == [(f"{STEPS}/item_branch.py", item), (f"{STEPS}/item_branch.py", branch)]
    assert breaks["count"] == 2
    reasons = {s["line"]: s["reason"] for s in breaks["sites"]}
    assert "item" in reasons[item].lower()
    assert "data-dependent" in reasons[branch].lower()
    assert variant["recompiles"]["count"] == 0  # the .item() reads a constant buffer
    assert variant["fallbacks_to_eager"] == 0
    note = next(n for n in said(variant)[0] if "graph break" in n)
    assert note.startswith("2 graph breaks in your code")
    table = " ".join(diagnostics_run.table.split())  # the table wraps at 100 columns
    assert f"item_branch.py:{item}" in table
    assert "item_branch.py" in note and "not wholly compiled: 2 graph breaks" in table


def test_whole_step_compile_counts_only_the_users_sites(diagnostics_run):
    """compile: step also compiles optimizer.step, whose own graph_break() calls are torch's."""
    breaks = diagnostics_run.variant("item_branch", "default+step")["graph_breaks"]
    assert breaks["count"] == 2
    theirs = [s for s in breaks["sites"] if not s["in_repo"]]
    assert theirs and all(s["file"].startswith("torch/optim/") for s in theirs)
    assert breaks["sites"][:2] == [s for s in breaks["sites"] if s["in_repo"]]
    assert not any(s["file"].startswith(("compilegate/", "runner/")) for s in breaks["sites"])


def test_print_in_a_layer_loop_reports_the_fallback_to_eager(diagnostics_run):
    variant = diagnostics_run.variant("print_in_loop")
    line = marked_line("print_in_loop.py", "print in loop")
    assert [(s["file"], s["line"]) for s in variant["graph_breaks"]["sites"]] == [
        (f"{STEPS}/print_in_loop.py", line)
    ]
    assert variant["fallbacks_to_eager"] >= 1
    reason = said(variant)[1][0]
    assert reason.startswith(f"forward in {STEPS}/print_in_loop.py fell back to eager")
    assert f"graph break in a loop at {STEPS}/print_in_loop.py:{line}" in reason
    assert any("fell back to eager" in note for note in said(variant)[0])
    assert "fell back to eager" in " ".join(diagnostics_run.table.split())


def test_changing_batch_shape_recompiles_exactly_once_and_dynamic_true_never(diagnostics_run):
    """Sizes 4, 4 (warm-up), 8, 8, 16, 16: automatic dynamic recompiles once, at 4 -> 8."""
    recompiles = diagnostics_run.variant("growing_batch")["recompiles"]
    assert recompiles["count"] == len(recompiles["events"]) == 1
    event = recompiles["events"][0]
    assert (event["function"], event["file"]) == ("forward", f"{STEPS}/growing_batch.py")
    forward = (REPO_ROOT / STEPS / "growing_batch.py").read_text().splitlines()
    assert event["line"] == 1 + forward.index("    def forward(self, x):")
    assert "size mismatch at index 0. expected 4, actual 8" in event["reason"]
    assert recompiles["limit_hit"] is False
    dynamic = diagnostics_run.variant("growing_batch", "default+dynamic+eager")["recompiles"]
    assert dynamic == {"count": 0, "events": [], "limit_hit": False}


def test_recompile_limit_hit_is_flagged_and_the_refused_attempt_is_not_counted(diagnostics_run):
    """dynamic=False, limit 2: sizes 4 and 8 compile, 16 hits the limit and runs eagerly."""
    variant = diagnostics_run.variant("recompile_limit", "default+static+eager")
    recompiles = variant["recompiles"]
    assert recompiles["count"] == 1
    assert "expected 4, actual 8" in recompiles["events"][0]["reason"]
    assert recompiles["limit_hit"] is True
    assert "limit_message" not in recompiles  # the limit's facts, worded by report/
    message = limit_words(part_of(Variant, variant).recompiles.limit)
    assert message.startswith(f"recompile limit hit: forward ({STEPS}/recompile_limit.py:")
    assert "runs eagerly from now on" in message and "actual 16" in message
    assert message in said(variant)[0]
    assert variant["fallbacks_to_eager"] >= 1


def test_breaks_are_sites_in_the_users_file_split_where_the_graph_was_cut(diagnostics_run):
    """The print in a helper cuts Encoder.forward's graph where it calls the helper."""
    variant = diagnostics_run.variant("print_in_forward")
    sites = variant["graph_breaks"]["sites"]
    file = f"{STEPS}/print_in_forward.py"
    split = marked_line("print_in_forward.py", "print", "GRAPH SPLIT")
    printed, explicit = (marked_line("print_in_forward.py", m) for m in ("print", "explicit"))
    assert [split_and_cause(s) for s in sites] == [
        (file, split, file, printed),
        (file, explicit, file, explicit),
    ]
    assert [s["origin"] for s in sites] == ["repo", "repo"]
    assert variant["graph_breaks"]["count"] == 2
    assert f"print_in_forward.py:{split} -> {file}:{printed}" in said(variant)[0][0]


def test_gpt2_loss_function_warning_is_one_break_one_site_in_the_library(diagnostics_run):
    """transformers' loss_function calls logger.warning_once, inlined from GPT-2's forward:
    torch compiles four frames on the way; the result has one site, counted and gated."""
    import inspect

    transformers = pytest.importorskip("transformers")
    from transformers.models.gpt2 import modeling_gpt2

    variant = diagnostics_run.variant("hf_gpt2", "default+eager")  # Dynamo alone
    breaks = variant["graph_breaks"]
    gated = [s for s in breaks["sites"] if s["origin"] in ("repo", "library")]
    assert breaks["count"] == len(gated) == 1, breaks
    (site,) = gated
    forward, first = inspect.getsourcelines(modeling_gpt2.GPT2LMHeadModel.forward)
    call = first + next(i for i, t in enumerate(forward) if "self.loss_function(" in t)
    loss_function = transformers.PreTrainedModel.loss_function.fget
    body, body_first = inspect.getsourcelines(loss_function)
    warn = body_first + next(i for i, t in enumerate(body) if "warning_once(" in t)
    assert split_and_cause(site) == (
        "transformers/models/gpt2/modeling_gpt2.py",
        call,
        "transformers/modeling_utils.py",
        warn,
    )
    assert site["origin"] == "library" and site["in_repo"] is False
    assert "logging.Logger" in site["reason"] and site["cause"]["reason"] == site["reason"]
    assert any(n.startswith("1 graph break in installed libraries") for n in said(variant)[0])


def test_no_absolute_path_of_the_measuring_machine_in_sites_reasons_or_guards(diagnostics_run):
    import json
    import sys
    from pathlib import Path

    machine = {str(REPO_ROOT), str(Path.home()), sys.prefix, "site-packages", "dist-packages"}
    for step in diagnostics_run.document["steps"]:
        for variant in step["variants"]:
            shown = json.dumps(
                {
                    k: variant.get(k)
                    for k in ("graph_breaks", "recompiles", "fallbacks", "cuda_graphs")
                }
            )
            assert not [m for m in machine if m in shown], (step["name"], shown)


def test_correct_steps_pass_numerics_in_fp32_and_with_dropout(diagnostics_run):
    for step in ("fp32_mlp", "dropout_mlp"):
        numerics = diagnostics_run.variant(step)["numerics"]
        assert numerics["status"] == "pass", numerics
        assert numerics["reference"] == "float64" and numerics["steps"] == 2
        assert numerics["dtype"] == "fp32" and numerics["failed"] == []
        assert "loss" in numerics["checked"]
        assert {w["kind"] for w in numerics["worst"]} <= {"loss", "grad", "param", "buffer"}
    checked = diagnostics_run.variant("dropout_mlp")["numerics"]["checked"]
    assert {"0.weight.grad", "0.weight", "1.running_mean"} <= set(checked)
    # Dropout draws random numbers: compiled again with fallback_random. The fp32 MLP draws
    # none: checked with the timed compile's code, no second compile.
    assert diagnostics_run.variant("dropout_mlp")["numerics"]["fallback_random"] is True
    assert diagnostics_run.variant("fp32_mlp")["numerics"]["fallback_random"] is False
    assert "(default, the timed code)" in diagnostics_run.child_output


def test_float64_reference_sees_eagers_batch_so_a_few_percent_compiled_error_fails(
    diagnostics_run,
):
    """batch(i) draws from a Generator at call time. The reference used to draw it again in
    float64 (other numbers: its loss 4.7-6.0 % off eager's), so this planted compiled-only
    error (~3.7 % on the loss) passed; now the reference agrees with eager to ~1e-7."""
    numerics = diagnostics_run.variant("batch_at_call_time")["numerics"]
    assert numerics["reference"] == "float64"
    assert numerics["reference_loss_rel_diff"] < 1e-5
    assert numerics["status"] == "fail" and "loss" in numerics["failed"]
    loss = [w for w in numerics["worst"] if w["tensor"] == "loss"]
    assert not loss or loss[0]["rmse_compiled"] > 1e4 * loss[0]["rmse_eager"]


def test_compiled_only_branch_fails_numerics_and_names_the_tensors(diagnostics_run):
    numerics = diagnostics_run.variant("compiled_differs")["numerics"]
    assert numerics["status"] == "fail"
    assert {"loss", "fc2.weight.grad", "fc1.weight.grad"} <= set(numerics["failed"])
    worst = numerics["worst"][0]
    assert worst["passed"] is False and worst["tensor"] in numerics["failed"]
    assert worst["rmse_compiled"] > 100 * worst["rmse_eager"]
    said = compared_words(part_of(Numerics, numerics)) or ""  # the code `compared`, worded
    assert "fc2.weight.grad" in said or "loss" in said
    assert "fail" in diagnostics_run.table


def test_an_interpreter_with_torch_and_nothing_else_measures_normally(diagnostics_run):
    """`--python` at a venv holding only torch (no pyyaml, no jsonschema): the promise users
    rely on to try another PyTorch version. The old-torch venv is such an interpreter."""
    import subprocess

    from cli_helpers import TORCH_PYTHON

    if diagnostics_run.python == TORCH_PYTHON:
        pytest.skip("the project's own interpreter has the parent's libraries too")
    for library in ("yaml", "jsonschema", "requests", "docker"):
        probe = [diagnostics_run.python, "-c", f"import {library}"]
        found = subprocess.run(probe, capture_output=True, check=False).returncode == 0
        assert not found, f"{diagnostics_run.python} has {library}: not a torch-only interpreter"
    for step in diagnostics_run.document["steps"]:
        assert step["status"] == "ok", step["error"]
        assert step["eager"]["step_ms"]["n"] > 0
        assert [v["status"] for v in step["variants"]] == ["ok"] * len(step["variants"])


def test_compile_work_counts_exist_on_this_torch(diagnostics_run):
    """All six counts on 2.4.1 and on the current torch (child/compile_cost.py's table); an
    MLP's forward and its lazily compiled backward are one record each."""
    cost = diagnostics_run.variant("fp32_mlp")["compile_cost"]
    counts = cost["counts"]
    assert counts["graphs"] == 1
    assert counts["compile_records"] == 1 and counts["backward_compile_records"] == 1
    assert counts["fx_nodes"] >= 3 and counts["guards"] >= 3
    assert counts["generated_kernels"] >= 1
    assert cost["cpu_s"] > 0 and cost["cpu_method"] == "rusage+proc"


def test_reduce_overhead_on_a_cpu_records_inductors_skip_and_its_row_gates_nothing(
    diagnostics_run,
):
    """Issue 55: on a CPU Inductor skips every CUDA graph. Torch counts the skip and does not
    log it there (2.4.1 compile_fx.py:540, 2.13 output_code.py:608): the reason is the one
    its lowering check returned, as each version words it (2.4.1 names the CPU node; 2.13,
    whose graph partition drops the CPU from the devices it lists, names none). The gate's
    row from this document against itself says the graphs cannot be used, and gates
    nothing; the run's table says it once."""
    from compilegate.gate.compare import compare_to_baseline
    from compilegate.report.row_words import row_message
    from compilegate.results.model import parse

    variant = diagnostics_run.variant("cuda_graphs_on_cpu", "reduce-overhead")
    graphs = variant["cuda_graphs"]
    assert graphs["skips"] == 1  # the forward's; its backward runs without graphs unasked
    (reason,) = graphs["reasons"]
    assert (reason["count"], reason["logged"], reason["file"]) == (1, False, None)
    torch = diagnostics_run.document["environment"]["torch"]
    assert reason["reason"] == (
        "cpu device (primals_1)" if torch.startswith("2.4.") else "multiple devices"
    )
    assert "cuda_graphs" not in diagnostics_run.variant("fp32_mlp")  # mode default asks none

    document = parse(diagnostics_run.document, "result.json")
    rows = compare_to_baseline(document, document).rows(metric="cuda_graph_skips")
    assert [(r.step, r.variant, r.verdict, r.gated) for r in rows] == [
        ("cuda_graphs_on_cpu", "reduce-overhead", "pass", False)
    ]
    assert row_message(rows[0]) == (
        "CUDA graphs cannot be used on a CPU: the variant ran without them (Inductor: "
        f"{reason['reason']}); not judged"
    )
    table = " ".join(diagnostics_run.table.split())
    said = "reduce-overhead ran without CUDA graphs: they cannot be used on a CPU (Inductor: "
    assert table.count("ran without CUDA graphs") == 1 and said in table
