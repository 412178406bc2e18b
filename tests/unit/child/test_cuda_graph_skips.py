"""Inductor's CUDA-graph skip messages, as PyTorch 2.4.1 and 2.13 compose them, read into a
variant's `cuda_graphs` (child/cuda_graph_skips.py).

Each message below is built with the f-string of the PyTorch source named beside it (the
2.4.1 wheel's and the 2.13 wheel's torch/_inductor), around a stack trace in the form FX
records it (`  File "...", line N, in fn\\n    code\\n`, as a real 2.4.1 CPU run returned it).
A GPU is where most of them are logged; none is needed to read them.
"""

from __future__ import annotations

import logging

import pytest

from compilegate.child.cuda_graph_skips import (
    CudaGraphSkipProbe,
    asks_for_cuda_graphs,
    cuda_graph_report,
    parse_skip,
    skip_reason,
)
from compilegate.child.dynamo_logs import PathClassifier

REPO = "/repo"
TORCH = "/venv/lib/python3.11/site-packages/torch"
PATHS = PathClassifier(
    REPO,
    {"torch": TORCH, "compilegate": "/repo/runner/compilegate"},
    ["/venv/lib/python3.11/site-packages", "/usr/lib/python3.11"],
)


def stack(*frames: tuple[str, int, str, str]) -> str:
    """node.meta["stack_trace"]: outermost frame first."""
    return "".join(f'  File "{f}", line {n}, in {fn}\n    {code}\n' for f, n, fn, code in frames)


MUTATION = stack(
    ("/repo/runner/compilegate/child/training.py", 80, "__call__", "loss = self.loss(m, x)"),
    ("/repo/model.py", 88, "forward", "x.add_(1)"),
)
CPU_USE = stack(("/repo/model.py", 12, "forward", "return self.lin(x).relu()"))
ITEM = stack(("/repo/model.py", 73, "forward", "n = x.sum().item()"))
VIEW = stack(("/repo/model.py", 30, "forward", "y = x.view(-1)"))


def fmt(reason: str) -> str:
    # 2.4.1 cudagraph_utils.py:51 / 2.13 cudagraph_utils.py:261 format_default_skip_message
    return f"skipping cudagraphs due to {reason}"


# (which torch, where the source composes it, the message, torch's reason, file, line)
MESSAGES = [
    (
        "2.13",
        "cudagraph_utils.py:275-279 get_mutation_stack_trace (cudagraph_trees, output_code)",
        f"{fmt('mutated inputs (1 instances)')}. Found from : \n {MUTATION}",
        "mutated inputs (1 instances)",
        "model.py",
        88,
    ),
    (
        "2.4.1",
        "cudagraph_utils.py:64-68 get_mutation_stack_trace",
        f"{fmt('mutated inputs (2 instances)')}. Found from : \n {MUTATION}",
        "mutated inputs (2 instances)",
        "model.py",
        88,
    ),
    (
        "2.4.1 and 2.13",
        "cudagraph_utils.py:149 / :406 default_msg (cudagraph trees off)",
        fmt("mutated inputs"),
        "mutated inputs",
        None,
        None,
    ),
    (
        "2.4.1",
        "cudagraph_utils.py:110-112, the reason a CPU run's lowering check returned",
        fmt(f"cpu device (primals_1). Found from : \n {CPU_USE}"),
        "cpu device (primals_1)",
        "model.py",
        12,
    ),
    (
        "2.4.1",
        "cudagraph_utils.py:110-112 on a CPU, an nn.Sequential's stack through torch alone (a "
        "real run of examples/test_steps/tiny_mlp.py): no place the user could act on",
        fmt(
            "cpu device (primals_1). Found from : \n "
            + stack((f"{TORCH}/_dynamo/external_utils.py", 38, "inner", "return fn(*args)"))
        ),
        "cpu device (primals_1)",
        None,
        None,
    ),
    (
        "2.4.1",
        "compile_fx.py:537 wraps cudagraph_utils.py:112's reason again (a CUDA graph with a "
        "CPU tensor)",
        fmt(fmt(f"cpu device (arg3_1). Found from : \n {CPU_USE}")),
        "cpu device (arg3_1)",
        "model.py",
        12,
    ),
    (
        "2.13",
        "output_code.py:605 wraps cudagraph_utils.py:347's reason again",
        fmt(fmt("multiple devices: device(type='cuda', index=0), device(type='cpu')")),
        "multiple devices: device(type='cuda', index=0), device(type='cpu')",
        None,
        None,
    ),
    (
        "2.13",
        "cudagraph_utils.py:347 on a CPU, where graph partition drops the CPU (a real run)",
        fmt("multiple devices: "),
        "multiple devices",
        None,
        None,
    ),
    (
        "2.13",
        "cudagraph_utils.py:232-234, logged as the graph's own reason (output_code.py:284)",
        f"input storage mutation (1 instances). Found from:\n {MUTATION}",
        "input storage mutation (1 instances)",
        "model.py",
        88,
    ),
    (
        "2.4.1 and 2.13",
        "compile_fx.py:850-860 / :1690-1698, wrapped by compile_fx.py:537 / output_code.py:605",
        fmt(
            "graph with symbolic shapes inputs and config.triton.cudagraph_skip_dynamic_graphs"
            f"=True. Found from {VIEW}\n"
        ),
        "graph with symbolic shapes inputs and config.triton.cudagraph_skip_dynamic_graphs=True",
        "model.py",
        30,
    ),
    (
        "2.13",
        "compile_fx.py:1711-1715, wrapped by output_code.py:605",
        fmt(
            "disabling cudagraphs due to incompatible op aten._local_scalar_dense.default "
            f"Found from {ITEM}\n"
        ),
        "incompatible op aten._local_scalar_dense.default",
        "model.py",
        73,
    ),
    (
        "2.4.1",
        "compile_fx.py:585-592 cudagraph_tests, logged as a list (compile_fx.py:655)",
        fmt(str(["incompatible ops"])),
        "incompatible ops",
        None,
        None,
    ),
    (
        "2.4.1",
        "compile_fx.py:655 with two failed tests",
        fmt(str(["mutated inputs", "complex memory overlap"])),
        "mutated inputs, complex memory overlap",
        None,
        None,
    ),
    (
        "2.13",
        "output_code.py:290 cudagraph_fail_reasons",
        fmt(str(["non-Tensor inputs"])),
        "non-Tensor inputs",
        None,
        None,
    ),
    (
        "2.4.1",
        "lowering.py:3045-3052 index_put_, wrapped by compile_fx.py:537",
        fmt(f"index put with accumulate. Found from : \n {ITEM}"),
        "index put with accumulate",
        "model.py",
        73,
    ),
    (
        "2.13",
        "lowering.py:4626-4629 index_put_, wrapped by output_code.py:605",
        fmt(
            "index_put_ fallback with boolean indexing is not compatible with CUDA graphs "
            f"Found from : \n {ITEM}"
        ),
        "index_put_ fallback with boolean indexing is not compatible with CUDA graphs",
        "model.py",
        73,
    ),
    (
        "2.4.1 and 2.13",
        "lowering.py:5911-5914 / :8603-8606 torch.cond",
        fmt(f"control flow operator: torch.cond. Found from : \n {VIEW}"),
        "control flow operator: torch.cond",
        "model.py",
        30,
    ),
    (
        "2.13",
        "cudagraph_trees.py:2355-2360 re-recording limit, with log_data_ptr_mismatch's text "
        "(cudagraph_utils.py:479-490)",
        "skipping cudagraph due to function 3 exceeding max re-recording limit (=50) on "
        "cudagraph node 2 due to static input data pointer changed.\ninput name: primals_2. "
        f"data pointer changed from 139 to 140. input stack trace: {VIEW}\n.",
        "function 3 exceeding max re-recording limit (=50) on cudagraph node 2 due to static "
        "input data pointer changed",
        "model.py",
        30,
    ),
    (
        "2.13",
        "output_code.py:225 the compiler bisector",
        "skipping cudagraphs due to bisector",
        "bisector",
        None,
        None,
    ),
]


def text_of(reason: str, file: str | None = "model.py") -> str:
    """The message of MESSAGES that gives `reason` at `file`."""
    return next(m[2] for m in MESSAGES if (m[3], m[4]) == (reason, file))


MUTATION_213 = text_of("mutated inputs (1 instances)")
MUTATION_241 = text_of("mutated inputs (2 instances)")
STORAGE_213 = text_of("input storage mutation (1 instances)")
CPU_241 = text_of("cpu device (primals_1)")


@pytest.mark.parametrize(
    ("version", "source", "text", "reason", "file", "line"),
    MESSAGES,
    ids=[f"{m[0]}: {m[1]}" for m in MESSAGES],
)
def test_each_message_gives_torchs_reason_and_the_users_line(
    version: str, source: str, text: str, reason: str, file: str | None, line: int | None
) -> None:
    parsed = parse_skip(text, PATHS)
    assert parsed["reason"] == reason
    assert (parsed["file"], parsed["line"]) == (file, line)
    assert "/repo" not in str(parsed) and "/venv" not in str(parsed)


def test_the_innermost_frame_in_the_users_code_is_where_not_the_harness_calling_it() -> None:
    parsed = parse_skip(MUTATION_213, PATHS)
    assert parsed == {
        "reason": "mutated inputs (1 instances)",
        "file": "model.py",
        "line": 88,
        "function": "forward",
        "origin": "repo",
    }


def test_a_skip_inside_a_library_is_placed_there_package_relative() -> None:
    inside = stack(
        ("/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py", 40,
         "forward", "h.add_(1)"),
    )  # fmt: skip
    parsed = parse_skip(f"{fmt('mutated inputs (1 instances)')}. Found from : \n {inside}", PATHS)
    assert (parsed["file"], parsed["origin"]) == (
        "transformers/models/gpt2/modeling_gpt2.py",
        "library",
    )


def test_generated_code_in_the_stack_is_no_place() -> None:
    generated = stack(("<eval_with_key>.3", 5, "forward", "add_ = torch.ops.aten.add_.Tensor"))
    parsed = parse_skip(
        f"{fmt('mutated inputs (1 instances)')}. Found from : \n {generated}", PATHS
    )
    assert (parsed["reason"], parsed["file"], parsed["line"]) == (
        "mutated inputs (1 instances)",
        None,
        None,
    )


def test_a_reason_that_names_an_absolute_path_shows_it_relative() -> None:
    assert skip_reason(fmt("weird op at /repo/ops/custom.py")) == "weird op at /repo/ops/custom.py"
    parsed = parse_skip(fmt("weird op at /repo/ops/custom.py"), PATHS)
    assert parsed["reason"] == "weird op at ops/custom.py"


def test_each_reason_once_with_its_count_and_a_logged_one_not_again_as_unlogged() -> None:
    """On a GPU a CPU tensor's reason is both returned by the lowering check and logged,
    wrapped once more (2.4.1 compile_fx.py:537): one skip, said once, as logged."""
    returned = fmt(f"cpu device (arg3_1). Found from : \n {CPU_USE}")
    report = cuda_graph_report(
        3,
        logged=[fmt(returned), MUTATION_213, MUTATION_213],
        unlogged=[returned],
        paths=PATHS,
    )
    assert report["skips"] == 3
    assert [(r["reason"], r["count"], r["logged"]) for r in report["reasons"]] == [
        ("cpu device (arg3_1)", 1, True),
        ("mutated inputs (1 instances)", 2, True),
    ]


def test_a_cpu_run_says_its_unlogged_reason() -> None:
    """2.4.1 on a CPU: counted, never logged; the reason is what the lowering check returned."""
    report = cuda_graph_report(1, [], [CPU_241], PATHS)
    assert report == {
        "skips": 1,
        "reasons": [
            {
                "reason": "cpu device (primals_1)",
                "file": "model.py",
                "line": 12,
                "function": "forward",
                "origin": "repo",
                "count": 1,
                "logged": False,
            }
        ],
    }


def test_reasons_are_capped_and_the_count_still_says_every_skip() -> None:
    texts = [fmt(f"incompatible op aten.op{i}.default") for i in range(30)]
    report = cuda_graph_report(30, texts, [], PATHS)
    assert report["skips"] == 30
    assert len(report["reasons"]) == 20


@pytest.mark.parametrize(
    ("kwargs", "asks"),
    [
        ({"backend": "inductor", "mode": "reduce-overhead"}, True),
        ({"backend": "inductor", "mode": "max-autotune"}, True),
        ({"backend": "inductor", "mode": "max-autotune-no-cudagraphs"}, False),
        ({"backend": "inductor", "mode": "default"}, False),
        ({"backend": "cudagraphs"}, True),
        ({"backend": "eager", "mode": "reduce-overhead"}, False),
    ],
)
def test_which_variants_ask_for_cuda_graphs(kwargs: dict[str, str], asks: bool) -> None:
    assert asks_for_cuda_graphs(kwargs) is asks


def test_the_probe_hears_both_versions_loggers_and_reads_the_lowering_checks_reason() -> None:
    """2.4's perf_hints logger does not propagate, 2.13's cudagraphs logger does: each gets
    the handler. The real 2.13 check_lowering_disable_cudagraph is wrapped while the probe
    runs and put back after it."""
    torch = pytest.importorskip("torch")
    import torch._inductor.cudagraph_utils as utils

    original = utils.check_lowering_disable_cudagraph
    old_log = logging.getLogger("torch._inductor.cudagraph_utils.__perf_hints")
    new_log = logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs")
    probe = CudaGraphSkipProbe()
    with probe:
        old_log.warning(MUTATION_241)
        new_log.warning(STORAGE_213)
        new_log.warning("CUDAGraph supports dynamic shapes by recording a new graph for each ...")
        assert utils.check_lowering_disable_cudagraph is not original
        returned = utils.check_lowering_disable_cudagraph({torch.device("meta"): None})
    assert utils.check_lowering_disable_cudagraph is original
    assert probe.logged == [MUTATION_241, STORAGE_213]
    assert probe.unlogged == ([returned] if returned is not None else [])
    old_log.warning(MUTATION_213)  # after the probe: not heard
    assert len(probe.logged) == 2
