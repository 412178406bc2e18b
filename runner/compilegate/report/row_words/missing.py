"""The words of a row that could not be judged because one side lacks a measurement."""

from __future__ import annotations

from ...gate.rules import Defect, DiagnosticsFailed, MissingFacts, RefusedDiagnostics, Side
from ...gate.verdict import MetricVerdict
from ..absence_words import diagnostics_failed_words
from ..degraded_words import refused_words
from .sentence import RowSentence

# What a missing metric is called in its row (the judge's metric → its name in a sentence).
LABELS = {
    "speedup": "speedup",
    "eager_step_ms": "eager step time",
    "compiled_step_ms": "compiled step time",
    "compile_s": "compile time",
    "compile_cpu_s": "compile CPU time",
    "recompiles": "recompiles",
    "graph_break_sites": "graph breaks",
    "fallbacks_to_eager": "fallbacks to eager",
    "ddp_splits": "DDP splits",
    "cuda_graph_skips": "CUDA graph skips",
    "peak_bytes": "peak memory",
}
_DEFECTS = {
    Defect.NOT_FINITE: "not a finite number",
    Defect.NOT_POSITIVE: "not a positive number",
}
_SIDES = {Side.RUN: "this run", Side.BASELINE: "the baseline"}


def missing_sentence(row: MetricVerdict, facts: MissingFacts) -> RowSentence:
    """A missing row's sentence: the metric's label its lead (`numerics: not measured …`)."""
    label = LABELS.get(row.metric, row.metric)
    if facts.defect is Defect.ABSENT and facts.side is Side.RUN:
        said = "not measured in this run"
    elif facts.defect is Defect.ABSENT:
        said = "not in the baseline, nothing to judge this run's against"
    else:
        said = f"{_DEFECTS[facts.defect]} in {_SIDES[facts.side]} ({facts.value})"
    cause = facts.cause
    if isinstance(cause, RefusedDiagnostics):
        cause = refused_words(cause.keys)
    elif isinstance(cause, DiagnosticsFailed):
        cause = diagnostics_failed_words(cause.error)
    return RowSentence(label, f"{said} ({cause})" if cause else said)
