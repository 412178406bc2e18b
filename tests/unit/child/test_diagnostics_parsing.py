"""The Dynamo log parsers (dynamo_logs.py) and how diagnostics.py combines their results.

Record texts are the ones torch 2.1.2, 2.4.1, 2.7.1 and 2.13.0 emitted (quoted in
../shared/reference/torch-compile-instrumentation.md §3-§4, or captured from this repo's
examples/test_steps on 2.4.1 and 2.13.0). No torch needed except in the last test.
"""

from __future__ import annotations

import importlib
import logging

import pytest
from child_said import limit_said, said

from compilegate.child.diagnostics import capture_record
from compilegate.child.diagnostics_report import build_report
from compilegate.child.dynamo_logs import (
    PathClassifier,
    parse_graph_break_record,
    parse_limit_warning,
    parse_loop_skip,
    parse_recompile_record,
)
from compilegate.report.absence_words import recompile_reason_words
from compilegate.results.model import RecompileEvent, part_of

REPO = "/repo"
STEP = "/repo/examples/step.py"
TORCH = "/venv/lib/python3.11/site-packages/torch"

GB_213 = """Graph break in user code at /repo/examples/step.py:67
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured graph.

  Developer debug context: call_method TensorVariable() item () {}

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

User code traceback:
  File "/repo/examples/step.py", line 86, in main
    loss = loss_fn(cmodel(x), y)
  ...
  File "/repo/examples/step.py", line 67, in forward
    self.last_act_norm = h.norm().item()  # <-- GRAPH BREAK (Tensor.item)
"""  # noqa: E501
GB_213_DUP = """Graph break (user stack suppressed due to duplicate graph break) in user code at /repo/examples/step.py:67
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
"""  # noqa: E501
GB_213_LOOP = """Graph break in user code at /repo/examples/loop.py:30
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types ['str', 'int', 'str'] (has_kwargs False)

*** While handling this graph break, another graph break occurred: ***

graph break in loop
  Explanation: torch.compile detected a graph break in a for/while loop. Skipping the frame and falling back to eager, as graph breaks in loops are not supported.

User code traceback:
  File "/repo/examples/loop.py", line 30, in forward
    print("block", index, "done")
"""  # noqa: E501
GB_27_BRANCH = """Graph break in user code at /repo/examples/step.py:30
Graph Break Reason: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not support tracing dynamic control flow.
User code traceback:
  File "/repo/examples/step.py", line 30, in forward
    if h.mean() > 10:
"""  # noqa: E501
GB_26_DUP = (
    "Graph break (details suppressed) in user code at /repo/examples/step.py:29\n"
    "Reason: Tensor.item"
)
GB_21 = (
    "Graph break: Tensor.item from user code at:\n"
    '  File "/repo/examples/step.py", line 67, in forward\n'
    "    self.last_act_norm = h.norm().item() ...\n"
)
GB_24 = (
    "Graph break: from user code at:\n"
    '  File "/repo/examples/step.py", line 40, in loss\n'
    "    return nn.functional.cross_entropy(model(x), y)\n"
    f'  File "{TORCH}/nn/modules/module.py", line 1562, in _call_impl\n'
    "    return forward_call(*args, **kwargs)\n"
    '  File "/repo/examples/step.py", line 21, in forward\n'
    "    scale = self.temperature.item()  # GRAPH BREAK: item\n"
)

RC_213 = """Recompiling function torch_dynamo_resume_in_forward_at_67 in /repo/examples/step.py:67
    triggered by the following guard failure(s):
    - 1/0: ___stack0 == 9.555194854736328      # self.last_act_norm = h.norm().item() ...  # exp1_counters_logs.py:67 in torch_dynamo_resume_in_forward_at_67
    - User stack trace:
    -   File "exp1_counters_logs.py", line 67, in torch_dynamo_resume_in_forward_at_67
    -     self.last_act_norm = h.norm().item()  # <-- GRAPH BREAK (Tensor.item)"""  # noqa: E501
RC_213_TWO = """Recompiling function forward in /repo/examples/step.py:18
    triggered by the following guard failure(s):
    - 0/1: tensor 'x' size mismatch at index 0. expected 8, actual 16
    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 16"""
RC_24 = """Recompiling function forward in /repo/examples/step.py:18
    triggered by the following guard failure(s):
    - tensor 'L['x']' size mismatch at index 0. expected 4, actual 8"""
RC_21_TUPLE = (
    "Recompiling function forward in exp1_counters_logs.py:65",
    "triggered by the following guard failure: tensor 'L['x']' size mismatch at "
    "index 0. expected 8, actual 16",
)
LIMIT_213 = """torch._dynamo hit config.recompile_limit (2)
   function: 'forward' (/repo/examples/step.py:20)
   last reason: 0/1: tensor 'x' size mismatch at index 0. expected 8, actual 16
To log all recompilation reasons, use TORCH_LOGS="recompiles".
To diagnose recompilation issues, see https://pytorch.org/docs/main/torch.compiler_troubleshooting.html"""
LIMIT_21 = "torch._dynamo hit config.cache_size_limit (64)\n   function: 'f' (/repo/x.py:75)\n"
LOOP_SKIP_24 = (
    "Skipping frame because there is a graph break in a for/while loop\n"
    "<FrameSummary file /repo/examples/loop.py, line 30 in forward>"
)


def paths() -> PathClassifier:
    return PathClassifier(
        REPO,
        {"torch": TORCH, "compilegate": "/repo/runner/compilegate"},
        ["/venv/lib/python3.11/site-packages", "/usr/lib/python3.11"],
    )


def record(
    logger: str,
    text: str,
    *,
    level: int = logging.DEBUG,
    exc: str = "",
    compile_id: str | None = None,
) -> dict:
    return {"logger": logger, "level": level, "text": text, "exc": exc, "compile_id": compile_id}


GB_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"
RC_LOGGER = "torch._dynamo.guards.__recompiles"


@pytest.mark.parametrize(
    ("text", "exc", "file", "line", "reason", "duplicate"),
    [
        (
            GB_213,
            "",
            STEP,
            67,
            "Unsupported Tensor.item() call with capture_scalar_outputs=False",
            False,
        ),
        (GB_213_DUP, "", STEP, 67, "Unsupported Tensor.item() call", True),
        (GB_27_BRANCH, "", STEP, 30, "Data-dependent branching. Detected data-dependent", False),
        (GB_26_DUP, "", STEP, 29, "Tensor.item", True),
        (GB_21, "", STEP, 67, "Tensor.item", False),
        (GB_24, "Tensor.item", STEP, 21, "Tensor.item", False),  # 2.3-2.5: reason in exc_info
    ],
    ids=["2.13", "2.13-dup", "2.7-branch", "2.6-dup", "2.1", "2.4"],
)
def test_graph_break_record_gives_site_and_reason(text, exc, file, line, reason, duplicate):
    parsed = parse_graph_break_record(text, exc)
    assert parsed is not None
    assert (parsed["file"], parsed["line"], parsed["duplicate"]) == (file, line, duplicate)
    assert parsed["reason"].startswith(reason)
    assert not parsed["fallback"]
    assert "Developer debug context" not in parsed["reason"]


def test_graph_break_in_a_loop_is_a_fallback_with_the_real_cause():
    parsed = parse_graph_break_record(GB_213_LOOP)
    assert parsed is not None and parsed["fallback"]
    assert (parsed["line"], parsed["function"]) == (30, "forward")
    assert parsed["reason"].startswith("Failed to trace builtin operator")
    assert "`print`" in parsed["reason"]


def test_old_skip_record_is_a_fallback():
    text = 'Graph break: skip: from user code at:\n  File "/repo/a.py", line 3, in f\n    x\n'
    parsed = parse_graph_break_record(text, "builtin: print [<class 'torch._dynamo.x.Var'>]")
    assert parsed is not None and parsed["fallback"] and parsed["reason"] == "builtin: print [Var]"


def test_24_loop_skip_record():
    assert parse_loop_skip(LOOP_SKIP_24) == {
        "file": "/repo/examples/loop.py",
        "line": 30,
        "function": "forward",
    }
    assert parse_loop_skip("Skipping frame because no content in function call") is None


def test_unrelated_text_is_not_a_graph_break():
    assert parse_graph_break_record("Graph break from `Tensor.item()`, consider setting:") is None


@pytest.mark.parametrize(
    ("text", "function", "line", "reasons"),
    [
        (RC_213, "torch_dynamo_resume_in_forward_at_67", 67, 1),
        (RC_213_TWO, "forward", 18, 2),
        (RC_24, "forward", 18, 1),
        ("\n".join(RC_21_TUPLE), "forward", 65, 1),
    ],
    ids=["2.13-user-stack", "2.13-two-entries", "2.4", "2.1-tuple"],
)
def test_recompile_record_gives_function_and_guard_reasons(text, function, line, reasons):
    parsed = parse_recompile_record(text)
    assert parsed is not None
    assert (parsed["function"], parsed["line"]) == (function, line)
    assert len(parsed["reasons"]) == reasons
    assert not any("User stack trace" in r or r.startswith("File") for r in parsed["reasons"])


def test_recompile_reasons_text():
    assert parse_recompile_record(RC_213_TWO)["reasons"][0] == (
        "0/1: tensor 'x' size mismatch at index 0. expected 8, actual 16"
    )
    assert parse_recompile_record("\n".join(RC_21_TUPLE))["reasons"] == [
        "tensor 'L['x']' size mismatch at index 0. expected 8, actual 16"
    ]
    assert parse_recompile_record(RC_213)["reasons"][0].startswith("1/0: ___stack0 == 9.555")


def test_capture_record_joins_the_21_tuple_message():
    rec = logging.LogRecord(
        "torch._dynamo.convert_frame.__recompiles", logging.DEBUG, "x", 1, RC_21_TUPLE, None, None
    )
    captured = capture_record(rec)
    assert captured["text"].startswith("Recompiling function forward in")
    assert parse_recompile_record(captured["text"])["line"] == 65


def test_limit_warning_both_formats():
    new = parse_limit_warning(LIMIT_213)
    assert new == {
        "limit": "recompile_limit",
        "value": 2,
        "function": "forward",
        "file": "/repo/examples/step.py",
        "line": 20,
        "reason": "0/1: tensor 'x' size mismatch at index 0. expected 8, actual 16",
    }
    old = parse_limit_warning(LIMIT_21)
    assert old["limit"] == "cache_size_limit" and old["value"] == 64 and old["reason"] is None


def test_paths_relative_to_repo_or_package_with_their_origin():
    p = paths()
    assert p.classify(STEP) == ("examples/step.py", True)
    assert p.locate(STEP) == ("examples/step.py", "repo")
    assert p.locate(f"{TORCH}/optim/optimizer.py") == ("torch/optim/optimizer.py", "torch")
    assert p.locate("/repo/runner/compilegate/training.py") == (
        "compilegate/training.py",
        "harness",
    )
    venv_timm = "/repo/.venv/lib/python3.11/site-packages/timm/x.py"
    assert p.locate(venv_timm) == ("timm/x.py", "library")  # a venv inside the repository
    assert p.locate("/usr/lib/python3.11/logging/__init__.py") == (
        "logging/__init__.py",
        "library",
    )
    assert p.locate("/elsewhere/deep/y.py") == (".../deep/y.py", "library")
    assert p.locate("<eval_with_key>.3") == ("<eval_with_key>.3", "library")


def test_reasons_and_guards_lose_the_machines_absolute_paths():
    p = paths()
    reason = (
        "'skip function graph_break in file "
        "/root/.cache/torch-2.4.1/lib/python3.11/site-packages/torch/_dynamo/decorators.py'"
    )
    assert p.relativize(reason) == "'skip function graph_break in file torch/_dynamo/decorators.py'"
    guard = "___stack0 == 9.5  # h.norm().item()  # /repo/examples/step.py:67 in forward"
    assert (
        p.relativize(guard)
        == "___stack0 == 9.5  # h.norm().item()  # examples/step.py:67 in forward"
    )
    assert (
        p.relativize("expected 4, actual 8 (a/b and 1/2)") == "expected 4, actual 8 (a/b and 1/2)"
    )


def test_sites_are_the_union_of_log_and_graph_break_reasons():
    """2.4: the data-dependent branch is only in graph_break_reasons; .item() in both."""
    snap = {
        "records": [record(GB_LOGGER, GB_24, exc="Tensor.item")],
        "break_reasons": [
            {"reason": "Tensor.item", "file": STEP, "line": 21},
            {"reason": "generic_jump TensorVariable()", "file": STEP, "line": 23},
            {"reason": "generic_jump TensorVariable()", "file": STEP, "line": 23},
            {
                "reason": "'skip function graph_break in file x'",
                "file": f"{TORCH}/optim/optimizer.py",
                "line": 88,
            },
        ],
    }
    report = build_report(snap, paths())
    breaks = report["graph_breaks"]
    assert breaks["count"] == 2
    sites = [(s["file"], s["line"], s["in_repo"]) for s in breaks["sites"]]
    assert sites == [
        ("examples/step.py", 21, True),
        ("examples/step.py", 23, True),
        ("torch/optim/optimizer.py", 88, False),
    ]
    first, second = breaks["sites"][:2]
    assert first["sources"] == ["log", "graph_break_reasons"] and first["reason"] == "Tensor.item"
    assert second["count"] == 2 and second["reason"].startswith("Data-dependent branching")
    notes, _ = said(report)
    assert notes[0].startswith("2 graph breaks in your code (examples/step.py:21")
    assert not any("optimizer" in note for note in notes)


def test_log_and_reasons_dedupe_on_file_and_line():
    """One compile each: the .item() frame compiled twice (a recompile: a record and an
    entry each time); the branch is only in the log."""
    item = {"reason": "Unsupported Tensor.item() call", "file": STEP, "line": 67}
    snap = {
        "records": [
            record(GB_LOGGER, GB_213),
            record(GB_LOGGER, GB_213_DUP),
            record(GB_LOGGER, GB_27_BRANCH),
        ],
        "break_reasons": [item, item],
    }
    breaks = build_report(snap, paths())["graph_breaks"]
    assert [(s["line"], s["count"]) for s in breaks["sites"]] == [(30, 1), (67, 2)]
    assert [s["sources"] for s in breaks["sites"]] == [["log"], ["log", "graph_break_reasons"]]


def test_recompiles_merge_log_and_metrics_by_compile_id():
    """2.4 compiles each module instance again without a log record: metrics fill the gap."""
    metrics = [
        {"compile_id": "0/0", "co_name": "forward", "co_filename": STEP, "co_firstlineno": 18},
        {
            "compile_id": "0/1",
            "co_name": "forward",
            "co_filename": STEP,
            "co_firstlineno": 18,
            "cache_size": 1,
        },
        {
            "compile_id": "1/1",
            "co_name": "forward",
            "co_filename": "/repo/b.py",
            "co_firstlineno": 5,
            "cache_size": 0,
        },
        {"compile_id": "0/1", "co_name": None},  # a lazily compiled backward entry
    ]
    snap = {"records": [record(RC_LOGGER, RC_24, compile_id="0/1")], "metrics": metrics}
    recompiles = build_report(snap, paths())["recompiles"]
    assert recompiles["count"] == 2
    logged, unlogged = recompiles["events"]
    assert logged == {
        "function": "forward",
        "file": "examples/step.py",
        "origin": "repo",
        "line": 18,
        "reason": "tensor 'L['x']' size mismatch at index 0. expected 4, actual 8",
        "reasons": ["tensor 'L['x']' size mismatch at index 0. expected 4, actual 8"],
        "compile_id": "0/1",
    }
    assert (unlogged["file"], unlogged["compile_id"]) == ("b.py", "1/1")
    assert unlogged["reason"] == "no_guard_failure_logged"  # a code: torch gave no reason
    assert recompile_reason_words(part_of(RecompileEvent, unlogged).reason) == (
        "no guard failure was logged (torch <= 2.4 compiles each instance of a module class "
        "separately)"
    )
    assert recompiles["limit_hit"] is False


def test_recompile_reason_drops_the_compile_id_prefix_but_keeps_all_reasons():
    snap = {"records": [record(RC_LOGGER, RC_213_TWO, compile_id="0/2")]}
    event = build_report(snap, paths())["recompiles"]["events"][0]
    assert event["reason"] == "tensor 'x' size mismatch at index 0. expected 8, actual 16"
    assert len(event["reasons"]) == 2


def test_limit_hit_refused_attempt_is_not_a_recompile_and_says_so():
    one = RC_213_TWO.replace("0/1: ", "").split("\n    - 0/0")[0]
    snap = {
        "records": [
            record(RC_LOGGER, one.replace("8, actual 16", "4, actual 8"), compile_id="0/1"),
            record(RC_LOGGER, RC_213_TWO, compile_id="0/2"),
            record("torch._dynamo.convert_frame", LIMIT_213, level=logging.WARNING),
        ],
        "counters": {"frames": {"total": 3, "ok": 2}},
    }
    report = build_report(snap, paths())
    assert report["recompiles"]["count"] == 1
    assert report["recompiles"]["limit_hit"] is True
    assert "limit_message" not in report["recompiles"]  # facts only: report/ words the note
    message = limit_said(report)
    assert message is not None
    assert message.startswith("recompile limit hit: forward (examples/step.py:20) runs eagerly")
    assert report["fallbacks_to_eager"] == 1
    notes, _ = said(report)
    assert message in notes
    assert not any("torch gave no reason" in note for note in notes)


def test_fallbacks_from_213_log_and_metrics_are_one_frame():
    snap = {
        "records": [record(GB_LOGGER, GB_213_LOOP)],
        "metrics": [
            {
                "compile_id": "0/0",
                "co_name": "forward",
                "fail_type": "Unsupported",
                "co_filename": "/repo/examples/loop.py",
                "co_firstlineno": 27,
                "fail_reason": "Failed to trace builtin operator",
            }
        ],
        "counters": {"frames": {"total": 3, "ok": 2}},
    }
    report = build_report(snap, paths())
    assert report["fallbacks_to_eager"] == 1
    assert said(report)[1] == [
        "forward in examples/loop.py fell back to eager: graph break in a loop at "
        "examples/loop.py:30 (Failed to trace builtin operator)"
    ]
    assert report["graph_breaks"]["count"] == 1


def test_fallback_from_24_info_record_when_counters_see_nothing():
    """2.4 counts the skipped frame as ok; only the INFO record tells."""
    gb = GB_24.replace("step.py", "loop.py").replace("line 21", "line 30")
    snap = {
        "records": [
            record(GB_LOGGER, gb, exc="builtin: print [<class 'x.Const'>] False"),
            record("torch._dynamo.symbolic_convert", LOOP_SKIP_24, level=logging.INFO),
        ],
        "counters": {"frames": {"total": 4, "ok": 4}},
    }
    report = build_report(snap, paths())
    assert report["fallbacks_to_eager"] == 1
    assert said(report)[1] == [
        "forward in examples/loop.py fell back to eager: graph break in a loop at "
        "examples/loop.py:30 (builtin: print [Const] False)"
    ]


def test_cache_counters_and_empty_snapshot():
    snap = {
        "counters": {
            "inductor": {"fxgraph_cache_hit": 2, "pattern_matcher_count": 5},
            "aot_autograd": {"autograd_cache_miss": 1, "total": 3},
        }
    }
    report = build_report(snap, paths())
    assert report["cache"] == {"fxgraph_cache_hit": 2, "autograd_cache_miss": 1}
    assert report["graph_breaks"] == {"count": 0, "sites": []}
    assert report["recompiles"]["count"] == 0 and said(report) == ([], [])


def test_probe_captures_artifact_records_without_printing_them(capsys):
    """The probe's DEBUG records reach its handler, not the child's stderr; warnings still do."""
    torch = pytest.importorskip("torch")
    importlib.import_module("torch._dynamo")  # registers the artifact loggers

    from compilegate.child.diagnostics import CompileProbe

    recompiles_log = torch._logging.getArtifactLogger("torch._dynamo.guards", "recompiles")
    probe = CompileProbe(repo_root=REPO)
    with probe:
        recompiles_log.debug(RC_24)
        logging.getLogger("torch._dynamo.convert_frame").warning("an unrelated warning")
    err = capsys.readouterr().err
    assert "Recompiling function" not in err
    assert "an unrelated warning" in err
    report = probe.report()
    assert report["recompiles"]["count"] == 1
    assert report["recompiles"]["events"][0]["file"] == "examples/step.py"
    assert not recompiles_log.isEnabledFor(logging.DEBUG)  # torch's defaults are back
    assert all(not h.filters for h in logging.getLogger("torch._dynamo").handlers)
