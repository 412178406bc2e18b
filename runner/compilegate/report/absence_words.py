"""Every word of why the child took no count, and why a numerics check reached no verdict:
the codes it records (results/model.py Absence, NumericsReason) with their figures, and its
failed diagnostics pass. A document from before they were recorded as codes holds the
child's sentence: said as recorded.

    cpu_no_kernels           on the CPU there are no device kernels: …
    no_instruction_counter   torch 2.4.1 has no compile-time instruction counter
    no_hardware_counter      not available on this machine: no hardware instruction counter …
    skipped_zero_steps       numerics.steps is 0
    no_repeated_block        the model has no nn.ModuleList or nn.Sequential of two or …
"""

from __future__ import annotations

from ..results.model import (
    Absence,
    DistributedRun,
    Numerics,
    NumericsReason,
    RecompileReason,
    StepWork,
)
from .numerics_words import compared_words

# A step-work pass's failure, as the child kept it (child/step_work.py).
PASS_FAILED_CHARS = 300

_NO_REGION = "this torch's profiler marks no compiled region (no Dynamo event)"

_ABSENCE_WORDS = {
    Absence.CPU_NO_KERNELS: (
        "on the CPU there are no device kernels: eager's ops run in their ATen kernels "
        "(aten_ops), and Inductor's generated C++ kernels leave no profiler event without "
        "cpp.enable_kernel_profile, which would need another compile"
    ),
    Absence.CPU_NO_CUDA_GRAPHS: "CUDA graphs exist only on CUDA",
    Absence.NO_COMPILED_REGION: _NO_REGION,
    Absence.NO_COMPILED_REGION_OPS: (
        _NO_REGION + ": ops inside and outside compiled code cannot be told apart"
    ),
    Absence.RECOMPILED: (
        "the counted iteration compiled (torch._dynamo's counters moved): not a steady step"
    ),
    Absence.NO_HARDWARE_COUNTER: (
        "not available on this machine: no hardware instruction counter (perf_event_open "
        "refused; virtual machines often lack one)"
    ),
    Absence.NO_INDUCTOR_CACHE_DIR: "the process had no Inductor cache directory to save beside",
    Absence.SAVED_NOTHING: "torch.compiler.save_cache_artifacts() saved nothing",
    Absence.PROCESS_FAILED: "its process failed",
    Absence.NOT_MEASURED: "not measured",
    Absence.NO_REPEATED_BLOCK: (
        "the model has no nn.ModuleList or nn.Sequential of two or more blocks of one class: "
        "regional compilation has no repeated block to compile once and reuse"
    ),
}


def absence_words(
    absence: Absence | str, *, torch: str | None = None, error: str | None = None
) -> str:
    """Why a count was not taken. `torch`: the release an absence names (compile cost's
    `absent_torch`); `error`: a failed count pass's exception (step work's `pass_error`)."""
    if not isinstance(absence, Absence):
        return absence  # an older document's sentence, as recorded
    if absence is Absence.NO_INSTRUCTION_COUNTER:
        return f"torch {torch or '(unknown)'} has no compile-time instruction counter"
    if absence is Absence.NO_SAVE_CACHE_ARTIFACTS:
        return f"torch {torch or '(unknown)'} has no torch.compiler.save_cache_artifacts"
    if absence is Absence.COUNT_PASS_FAILED:
        return f"the count pass failed: {error or '(no exception recorded)'}"[:PASS_FAILED_CHARS]
    return _ABSENCE_WORDS[absence]


def step_work_absent_words(work: StepWork) -> dict[str, str]:
    """Each absent count of a step-work record → why, in words."""
    return {key: absence_words(why, error=work.pass_error) for key, why in work.absent.items()}


def numerics_reason_words(reason: NumericsReason | str | None, error: str | None) -> str | None:
    """A numerics check's reason in words: why no verdict (a code, with its exception), or
    the child's sentence as recorded; None for none, and for a verdict (`compared`: said
    from its figures, numerics_said)."""
    if reason is NumericsReason.COMPARED:
        return None
    if reason is NumericsReason.SKIPPED_ZERO_STEPS:
        return "numerics.steps is 0"
    if reason is NumericsReason.ERROR:
        return error or "(no exception recorded)"
    return reason


def numerics_said(numerics: Numerics, distributed: DistributedRun | None = None) -> str | None:
    """`numerics_reason_words` of a numerics record (a verdict's: numerics_words), and,
    for a distributed step whose ranks ended with different parameters, which
    (`ranks_differ`)."""
    if numerics.reason is NumericsReason.COMPARED:
        said = compared_words(numerics)
    else:
        said = numerics_reason_words(numerics.reason, numerics.error)
    differ = distributed.ranks_differ if distributed is not None else None
    if not differ:
        return said
    ranks = (
        f"the ranks disagree: after the compiled steps the parameters of rank "
        f"{', '.join(map(str, differ))} differ from rank 0's (DDP keeps them equal)"
    )
    return "; ".join(filter(None, [said, ranks]))


_RECOMPILE_REASON_WORDS = {
    RecompileReason.NO_GUARD_FAILURE_LOGGED: (
        "no guard failure was logged (torch <= 2.4 compiles each instance of a module class "
        "separately)"
    ),
    RecompileReason.UNKNOWN_GUARD_FAILURE: "unknown guard failure",
}


def recompile_reason_words(reason: RecompileReason | str) -> str:
    """A recompile's reason: torch's text (or any other reason: a break site's), as recorded;
    where torch gave none, the code in words."""
    return _RECOMPILE_REASON_WORDS[reason] if isinstance(reason, RecompileReason) else reason


def diagnostics_failed_words(error: str) -> str:
    """A failed diagnostics pass, as the child's note said it before it was recorded."""
    return f"compile diagnostics failed: {error}"
