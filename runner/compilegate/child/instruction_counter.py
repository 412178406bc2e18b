"""Instructions the compile executed, counted by torch itself where the machine allows it.

torch's compile-time instruction counter (`torch._dynamo.utils.CompileTimeInstructionCounter`,
switched on by `torch._dynamo.config.record_compile_time_instruction_count`) counts the CPU
instructions of Dynamo's and Inductor's compile in this process through perf_event_open: what
PyTorch's own pr_time_benchmarks gate, with 1.5-10 % margins, because a count barely moves with
the machine's load where wall and CPU seconds do. It needs a hardware instruction counter,
which virtual machines often lack (this project's CPU runner has none: the start returns -1
and torch prints two lines to stderr, kept out of the child's log here). Counted only in a
variant's first process, from before torch.compile() to the end of the compiled warm-up.

Python 3.8, stdlib and torch only (the child's rule).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

# Why none, codes (results/model.py Absence; report/absence_words.py words them).
NO_API = "no_instruction_counter"  # this torch has none: its version beside it
NO_COUNTER = "no_hardware_counter"  # perf_event_open refused (virtual machines often)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """torch's C++ prints its perf_event errors straight to file descriptor 2."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def begin() -> dict[str, Any] | None:
    """Start counting before the compile; None when counting, else {"absent": code}, with
    the torch that lacks the counter (`torch`) where it is torch's."""
    import torch

    try:
        import torch._dynamo.config as dynamo_config
        from torch._dynamo.utils import CompileTimeInstructionCounter, _instruction_counter
    except Exception:
        return {"absent": NO_API, "torch": torch.__version__}
    if not hasattr(dynamo_config, "record_compile_time_instruction_count"):
        return {"absent": NO_API, "torch": torch.__version__}
    with _quiet_stderr():
        handle = _instruction_counter.start()
        if handle != -1:
            _instruction_counter.end(handle)
    if handle == -1:
        return {"absent": NO_COUNTER}
    CompileTimeInstructionCounter.clear()
    dynamo_config.record_compile_time_instruction_count = True
    return None


def end() -> dict[str, Any]:
    """Stop counting after the compile: {"instructions": n}."""
    import torch._dynamo.config as dynamo_config
    from torch._dynamo.utils import CompileTimeInstructionCounter

    dynamo_config.record_compile_time_instruction_count = False
    return {"instructions": int(CompileTimeInstructionCounter.value())}
