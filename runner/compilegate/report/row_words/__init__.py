"""Every word of a verdict row, composed from the facts its judge found.

A judge returns values (its family's `RowFacts`, defined beside it in gate/judges/); the
sentence a row shows — in the comment, `report`, `run` and the verdict JSON — is composed
here, one module per metric family, and nowhere else. Nothing in report/ reads numbers back
out of these sentences: a table cell reads the facts.

    worded_row(row)    everything report/ says of the row (worded.py `WordedRow`): its
                       sentence in its parts (sentence.py) and the facts its cells show that
                       only some families have; an accepted row: the regression's sentence
                       and who accepted it. Made once per row, and passed along
    worded_rows(versions)  worded_row of every row of a run set's versions, once for a
                       whole report (worded.py `WordedRows`): what its parts read
    by_family(row)     the same, by the row's facts family: one `match` over the closed
                       union gate/row_facts.py `RowFacts`, checked complete by mypy
    row_message(row)   the sentence alone, as one string (tools and tests)
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
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
from ...gate.run_set import VersionOutcome
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
    compile_work_said,
)
from .cuda_graphs import cuda_graph_words
from .diagnostics import count_words, graph_break_sentence
from .memory import memory_words
from .missing import missing_sentence
from .numerics import numerics_said
from .speed import speed_said
from .step_work import step_work_said
from .torch_state import torch_state_words
from .worded import WordedRow, WordedRows, words_only

if sys.version_info >= (3, 11):
    from typing import assert_never  # novermin (3.11 and later, checked above)
else:

    def assert_never(value: NoReturn, /) -> NoReturn:
        """typing.assert_never before 3.11: mypy checks against 3.11's."""
        raise AssertionError(f"facts without words: {type(value).__name__}")


def worded_row(row: MetricVerdict) -> WordedRow:
    """Everything report/ says of the row; an accepted row: what it says as the regression
    it was, and who accepted it (WordedRow.accepted)."""
    if row.accepted_by is None:
        return by_family(row)
    clause = f"; accepted by {acceptance_words(row.accepted_by)}"
    judged = dataclasses.replace(row, verdict=Verdict.REGRESSION, accepted_by=None)
    return by_family(judged).accepted(clause)


def worded_rows(versions: Iterable[VersionOutcome]) -> WordedRows:
    """Every gate row of the versions (a run set's), worded once (worded_row)."""
    said: dict[int, tuple[MetricVerdict, WordedRow]] = {}
    for version in versions:
        for row in version.verdict.verdicts if version.verdict is not None else ():
            said[id(row)] = (row, worded_row(row))
    return WordedRows(said)


def row_message(row: MetricVerdict) -> str:
    """The row's sentence, as one string."""
    return worded_row(row).text()


def by_family(row: MetricVerdict) -> WordedRow:
    """The row's words and cell facts, by its facts family: a `match` over the closed union
    `RowFacts` (gate/row_facts.py), so a family without words here fails the type check at
    `assert_never`. Each family's module composes them; one that has nothing for the cells
    beyond its row says its sentence alone (words_only)."""
    match closed_facts(row.facts):
        case MissingFacts() as facts:
            return WordedRow(missing_sentence(row, facts))
        case RunFailedFacts() as facts:
            return words_only(run_failed_words(row, facts))
        case AddedFacts() as facts:
            return words_only(added_words(row, facts))
        case RemovedFacts() as facts:
            return words_only(removed_words(row, facts))
        case SkippedFacts() as facts:
            return words_only(skipped_words(row, facts))
        case OtherClassFacts() as facts:
            return words_only(other_class_row_words(row, facts))
        case BaselineFailedFacts() as facts:
            return words_only(baseline_failed_words(row, facts))
        case ConfigChangedFacts() as facts:
            return words_only(config_changed_words(row, facts))
        case DefinitionChangedFacts() as facts:
            return words_only(definition_changed_words(row, facts))
        case SpeedFacts() as facts:
            return speed_said(row, facts)
        case CompileWallFacts() as facts:
            return words_only(compile_wall_words(row, facts))
        case CompileCpuFacts() as facts:
            return words_only(compile_cpu_words(row, facts))
        case CompileInstructionsFacts() as facts:
            return words_only(compile_instructions_words(row, facts))
        case CompileWorkFacts() as facts:
            return compile_work_said(row, facts)
        case StepWorkFacts() as facts:
            return step_work_said(row, facts)
        case GraphBreakFacts() as facts:
            return WordedRow(graph_break_sentence(row, facts))
        case RecompileFacts() | FallbackFacts() | DdpSplitFacts() as facts:
            return words_only(count_words(row, facts))
        case CudaGraphFacts() as facts:
            return words_only(cuda_graph_words(row, facts))
        case NumericsFacts() as facts:
            return numerics_said(row, facts)
        case MemoryFacts() as facts:
            return words_only(memory_words(row, facts))
        case TorchStateFacts() as facts:
            return words_only(torch_state_words(row, facts))
        case unworded:
            assert_never(unworded)
