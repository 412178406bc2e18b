"""Every word of a verdict row, composed from the facts its judge found.

A judge returns values (its family's `RowFacts`, defined beside it in gate/judges/); the
sentence a row shows — in the comment, `report`, `run` and the verdict JSON — is composed
here, one module per metric family, and nowhere else. Nothing in report/ reads numbers back
out of these sentences: a table cell reads the facts.

    row_message(row)   the row's sentence
    row_sentence(row)  the same sentence in its parts (row_words/sentence.py): its lead, the
                       place of a new graph break; for a screen that lays them out
    facts_words(row)   the words of its facts alone, by their family (a `match` over the
                       closed union gate/row_facts.py `RowFacts`, checked complete by mypy)
"""

from __future__ import annotations

import dataclasses
import sys
from typing import NoReturn

from ...gate.comparability import (
    AddedFacts,
    BaselineFailedFacts,
    ConfigChangedFacts,
    DefinitionChangedFacts,
    OtherClassFacts,
    RemovedFacts,
    RunFailedFacts,
    SkippedFacts,
)
from ...gate.judges.compile_cost import (
    CompileCpuFacts,
    CompileInstructionsFacts,
    CompileWallFacts,
    CompileWorkFacts,
)
from ...gate.judges.cuda_graphs import CudaGraphFacts
from ...gate.judges.diagnostics import DdpSplitFacts, FallbackFacts, GraphBreakFacts, RecompileFacts
from ...gate.judges.memory import MemoryFacts
from ...gate.judges.numerics import NumericsFacts
from ...gate.judges.speed_facts import SpeedFacts
from ...gate.judges.step_work import StepWorkFacts
from ...gate.judges.torch_state import TorchStateFacts
from ...gate.row_facts import closed_facts
from ...gate.rules import MissingFacts
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
    compile_work_sentence,
    compile_work_words,
)
from .cuda_graphs import cuda_graph_words
from .diagnostics import count_words, graph_break_sentence, graph_break_words
from .memory import memory_words
from .missing import missing_sentence, missing_words
from .numerics import numerics_words
from .sentence import RowSentence
from .speed import speed_words
from .step_work import step_work_sentence, step_work_words
from .torch_state import torch_state_words

if sys.version_info >= (3, 11):
    from typing import assert_never  # novermin (3.11 and later, checked above)
else:

    def assert_never(value: NoReturn, /) -> NoReturn:
        """typing.assert_never before 3.11: mypy checks against 3.11's."""
        raise AssertionError(f"facts without words: {type(value).__name__}")


def row_message(row: MetricVerdict) -> str:
    """The sentence that says what this row found (an accepted row: the regression's
    sentence, and who accepted it)."""
    return row_sentence(row).text()


def row_sentence(row: MetricVerdict) -> RowSentence:
    """row_message in its parts: the family it opens with (step work, compile work), and
    the place of a new graph break."""
    if row.accepted_by is not None:
        judged = dataclasses.replace(row, verdict=Verdict.REGRESSION, accepted_by=None)
        return row_sentence(judged).with_after(f"; accepted by {acceptance_words(row.accepted_by)}")
    facts = row.facts
    if isinstance(facts, GraphBreakFacts):
        return graph_break_sentence(row, facts)
    if isinstance(facts, StepWorkFacts):
        return step_work_sentence(row, facts)
    if isinstance(facts, CompileWorkFacts):
        return compile_work_sentence(row, facts)
    if isinstance(facts, MissingFacts):
        return missing_sentence(row, facts)
    return RowSentence("", facts_words(row))


def facts_words(row: MetricVerdict) -> str:
    """The words of the row's facts, by their family: a `match` over the closed union
    `RowFacts` (gate/row_facts.py), so a family without words here fails the type check
    at `assert_never`."""
    match closed_facts(row.facts):
        case MissingFacts() as facts:
            return missing_words(row, facts)
        case RunFailedFacts() as facts:
            return run_failed_words(row, facts)
        case AddedFacts() as facts:
            return added_words(row, facts)
        case RemovedFacts() as facts:
            return removed_words(row, facts)
        case SkippedFacts() as facts:
            return skipped_words(row, facts)
        case OtherClassFacts() as facts:
            return other_class_row_words(row, facts)
        case BaselineFailedFacts() as facts:
            return baseline_failed_words(row, facts)
        case ConfigChangedFacts() as facts:
            return config_changed_words(row, facts)
        case DefinitionChangedFacts() as facts:
            return definition_changed_words(row, facts)
        case SpeedFacts() as facts:
            return speed_words(row, facts)
        case CompileWallFacts() as facts:
            return compile_wall_words(row, facts)
        case CompileCpuFacts() as facts:
            return compile_cpu_words(row, facts)
        case CompileInstructionsFacts() as facts:
            return compile_instructions_words(row, facts)
        case CompileWorkFacts() as facts:
            return compile_work_words(row, facts)
        case StepWorkFacts() as facts:
            return step_work_words(row, facts)
        case GraphBreakFacts() as facts:
            return graph_break_words(row, facts)
        case RecompileFacts() | FallbackFacts() | DdpSplitFacts() as facts:
            return count_words(row, facts)
        case CudaGraphFacts() as facts:
            return cuda_graph_words(row, facts)
        case NumericsFacts() as facts:
            return numerics_words(row, facts)
        case MemoryFacts() as facts:
            return memory_words(row, facts)
        case TorchStateFacts() as facts:
            return torch_state_words(row, facts)
        case unworded:
            assert_never(unworded)
