"""Why Inductor ran a compiled variant without CUDA graphs: its skip count and reasons (child).

reduce-overhead and max-autotune (and the `cudagraphs` backend) wrap each compiled graph in
CUDA graphs. Where Inductor cannot (an input the graph mutates, a CPU tensor in it, dynamic
shapes, an incompatible op) it runs that graph without them, adds one to
`torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]` and logs a WARNING
"skipping cudagraphs due to <reason>" (cudagraph_utils.log_cudagraph_skip_and_bump_counter):

    2.4        on the `perf_hints` artifact logger of torch._inductor.cudagraph_utils, off by
               default (it does not propagate: the handler is attached to that logger itself)
    2.5-2.14   on the `cudagraphs` artifact logger of the same module (on by default)

A graph with no CUDA device in it (a CPU step) is counted and not logged (2.4.1
compile_fx.py:540, 2.13 output_code.py:608). Its reason is the string
cudagraph_utils.check_lowering_disable_cudagraph returns, which compile_fx imports anew at
each call (2.4.1 compile_fx.py:866, 2.13 compile_fx.py:1733): while the probe runs, that
function is wrapped to read what it returns, and nothing else changes.

`CudaGraphSkipProbe` captures the texts; `cuda_graph_report` (pure; unit-tested on the
messages' verbatim shapes from the PyTorch 2.4.1 and 2.13 sources) makes the variant's
`cuda_graphs` (schemas/result.schema.json) from them and the counter: each reason once with
how often it came, torch's words up to its stack trace, and where (the innermost frame of
that stack trace in the user's code, shown repo-relative, never an absolute path).

Child-process only: standard library and torch; every private torch API is guarded.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import re
from collections.abc import Iterable
from typing import Any, Callable

from .dynamo_logs import PathClassifier

# Where log_cudagraph_skip_and_bump_counter logs: 2.4 (perf_hints), 2.5+ (cudagraphs).
SKIP_LOGGERS = (
    "torch._inductor.cudagraph_utils.__perf_hints",
    "torch._inductor.cudagraph_utils.__cudagraphs",
)
# Modes of Inductor that wrap graphs in CUDA graphs (torch._inductor.list_mode_options:
# triton.cudagraphs), and the Dynamo backend that does nothing else.
GRAPH_MODES = ("reduce-overhead", "max-autotune")
GRAPH_BACKEND = "cudagraphs"
MAX_REASONS = 20  # distinct reasons kept; the count covers every skip
MAX_REASON_CHARS = 300

# "skipping cudagraphs due to " (doubled where a reason that already says it is wrapped
# again: 2.4.1 compile_fx.py:537, 2.13 output_code.py:605, the cudagraphs backend), 2.13's
# singular "skipping cudagraph due to function N exceeding max re-recording limit", and
# 2.13's "disabling cudagraphs due to incompatible op ...".
_PREFIX_RE = re.compile(r"^\s*(?:skipping cudagraphs? due to|disabling cudagraphs due to)\s+")
# Where torch appends the node's stack trace: ". Found from : \n", ". Found from:\n",
# ". Found from " (symbolic shapes) or " Found from " (incompatible op, 2.13).
_FOUND_FROM_RE = re.compile(r"\.?\s*Found from\b")
_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\s]+)')
# Every WARNING on SKIP_LOGGERS is a skip (some without "skipping cudagraphs due to": 2.13
# output_code.py:284 logs a graph's own reason, "input storage mutation (1 instances)..."),
# but 2.13's warning of many recorded shapes (cudagraph_utils.py:516), which is not one.
NOT_A_SKIP = "CUDAGraph supports dynamic shapes"


def asks_for_cuda_graphs(compile_kwargs: dict[str, Any]) -> bool:
    """Whether torch.compile with these keyword arguments wraps graphs in CUDA graphs."""
    backend = compile_kwargs.get("backend", "inductor")
    if backend == GRAPH_BACKEND:
        return True
    return backend == "inductor" and compile_kwargs.get("mode") in GRAPH_MODES


class CudaGraphSkipProbe:
    """Context manager: the skip messages Inductor logs (`logged`) and the reasons its
    lowering check returned (`unlogged`: on a CPU they are never logged), in order."""

    def __init__(self) -> None:
        self.logged: list[str] = []
        self.unlogged: list[str] = []
        self._handler = _SkipHandler(self.logged)
        self._restore: Callable[[], None] | None = None

    def __enter__(self) -> CudaGraphSkipProbe:
        for name in SKIP_LOGGERS:
            logging.getLogger(name).addHandler(self._handler)
        self._restore = _wrap_lowering_check(self.unlogged)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in SKIP_LOGGERS:
            logging.getLogger(name).removeHandler(self._handler)
        if self._restore is not None:
            self._restore()
            self._restore = None


class _SkipHandler(logging.Handler):
    def __init__(self, texts: list[str]) -> None:
        super().__init__(level=logging.DEBUG)
        self.texts = texts

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.levelno >= logging.WARNING and not text.startswith(NOT_A_SKIP):
                self.texts.append(text)
        except Exception:  # a logging handler must not raise into torch
            pass


def _wrap_lowering_check(found: list[str]) -> Callable[[], None] | None:
    """Wrap cudagraph_utils.check_lowering_disable_cudagraph (2.4-2.14) so that each reason
    it returns is also appended to `found`; returns what puts it back (None: no such
    function in this torch, nothing wrapped)."""
    try:
        import torch._inductor.cudagraph_utils as utils
    except Exception:
        return None
    original = getattr(utils, "check_lowering_disable_cudagraph", None)
    if not callable(original):
        return None

    def check_lowering_disable_cudagraph(*args: Any, **kwargs: Any) -> Any:
        reason = original(*args, **kwargs)
        if isinstance(reason, str):
            found.append(reason)
        return reason

    utils.check_lowering_disable_cudagraph = check_lowering_disable_cudagraph

    def restore() -> None:
        with contextlib.suppress(Exception):
            utils.check_lowering_disable_cudagraph = original

    return restore


def cuda_graph_report(
    skips: int, logged: Iterable[str], unlogged: Iterable[str], paths: PathClassifier
) -> dict[str, Any]:
    """The variant's `cuda_graphs`: Inductor's skip count and each distinct reason once.

    A reason the lowering check returned and torch also logged (a CPU tensor in a CUDA
    graph) is said once, as logged."""
    reasons: dict[tuple[Any, ...], dict[str, Any]] = {}
    for text, logged_here in [*((t, True) for t in logged), *((t, False) for t in unlogged)]:
        skip = parse_skip(text, paths)
        key = (skip["reason"], skip["file"], skip["line"])
        if key in reasons:
            # an unlogged reason torch logged as well is that skip, not another one
            if logged_here or not reasons[key]["logged"]:
                reasons[key]["count"] += 1
            continue
        if len(reasons) < MAX_REASONS:
            reasons[key] = {**skip, "count": 1, "logged": logged_here}
    return {"skips": int(skips), "reasons": list(reasons.values())}


def parse_skip(text: str, paths: PathClassifier) -> dict[str, Any]:
    """One skip message: torch's reason (its words up to the stack trace, without the
    "skipping cudagraphs due to" it starts with) and where (`file`, `line`, `function`,
    `origin`: the innermost frame of the stack trace in the user's code, else in an
    installed library; all None when the stack trace has neither, or there is none)."""
    frames = [
        (paths.locate(m.group("file")), int(m.group("line")), m.group("fn"))
        for m in _FRAME_RE.finditer(text)
    ]
    place: dict[str, Any] = {"file": None, "line": None, "function": None, "origin": None}
    # torch's own frames, compilegate's and generated code (<eval_with_key>) say nothing
    # the user can act on
    for wanted in ("repo", "library"):
        chosen = [f for f in frames if f[0][1] == wanted and not f[0][0].startswith("<")]
        if chosen:
            (shown, origin), line, function = chosen[-1]
            place = {"file": shown, "line": line, "function": function, "origin": origin}
            break
    return {"reason": paths.relativize(skip_reason(text)), **place}


def skip_reason(text: str) -> str:
    """Torch's reason in a skip message: `mutated inputs (1 instances)` of
    "skipping cudagraphs due to mutated inputs (1 instances). Found from : \\n  File ...";
    a list of reasons (`['non-Tensor inputs']`) as `non-Tensor inputs`."""
    body = text
    while match := _PREFIX_RE.match(body):
        body = body[match.end() :]
    body = _FOUND_FROM_RE.split(body, maxsplit=1)[0]
    # 2.13 on a CPU says "multiple devices: " and names none (graph partition drops the CPU)
    body = (body.strip().splitlines() or [""])[0].strip().rstrip(".: ")
    if body.startswith("[") and body.endswith("]"):
        with contextlib.suppress(Exception):
            listed = ast.literal_eval(body)
            if isinstance(listed, list) and all(isinstance(item, str) for item in listed):
                body = ", ".join(listed)
    body = body or "no reason given"
    return body if len(body) <= MAX_REASON_CHARS else body[: MAX_REASON_CHARS - 1] + "…"
