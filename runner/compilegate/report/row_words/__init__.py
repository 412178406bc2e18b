"""Every word of a verdict row, composed from the facts its judge found.

A judge returns values (its family's `RowFacts`, defined beside it in gate/judges/); the
sentence a row shows — in the comment, `report`, `run` and the verdict JSON — is composed
here, one module per metric family, and nowhere else. Nothing in report/ reads numbers back
out of these sentences: a table cell reads the facts.

    row_message(row)   the row's sentence
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from ...gate.verdict import MetricVerdict, Verdict
from ..acceptance_words import acceptance_words
from .comparability import (
    added_words,
    baseline_failed_words,
    config_changed_words,
    definition_changed_words,
    other_class_row_words,
    removed_words,
    run_failed_words,
    skipped_words,
)
from .compile_cost import (
    compile_cpu_words,
    compile_instructions_words,
    compile_wall_words,
    compile_work_words,
)
from .cuda_graphs import cuda_graph_words
from .diagnostics import count_words, graph_break_words
from .memory import memory_words
from .missing import missing_words
from .numerics import numerics_words
from .speed import speed_words
from .step_work import step_work_words
from .torch_state import torch_state_words

# facts kind -> the function that words a row with such facts.
_WORDS: dict[str, Callable[[MetricVerdict], str]] = {
    "missing": missing_words,
    "numerics": numerics_words,
    "memory": memory_words,
    "torch_state": torch_state_words,
    "run_failed": run_failed_words,
    "added": added_words,
    "removed": removed_words,
    "skipped": skipped_words,
    "other_class": other_class_row_words,
    "baseline_failed": baseline_failed_words,
    "config_changed": config_changed_words,
    "definition_changed": definition_changed_words,
    "graph_breaks": graph_break_words,
    "recompiles": count_words,
    "fallbacks_to_eager": count_words,
    "ddp_splits": count_words,
    "cuda_graphs": cuda_graph_words,
    "speed": speed_words,
    "compile_wall": compile_wall_words,
    "compile_cpu": compile_cpu_words,
    "compile_instructions": compile_instructions_words,
    "compile_work": compile_work_words,
    "step_work": step_work_words,
}


def row_message(row: MetricVerdict) -> str:
    """The sentence that says what this row found (an accepted row: the regression's
    sentence, and who accepted it)."""
    if row.accepted_by is not None:
        judged = dataclasses.replace(row, verdict=Verdict.REGRESSION, accepted_by=None)
        return f"{row_message(judged)}; accepted by {acceptance_words(row.accepted_by)}"
    return _WORDS[row.facts.kind](row)
