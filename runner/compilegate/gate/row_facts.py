"""`RowFacts`: every kind of fact a judge can find for one row, as one closed union.

Each metric family's facts are defined beside its judge (a frozen dataclass on
`RowFactsBase`, gate/row_facts_base.py) and named here too; report/row_words/ words them in
a `match` over this union that ends in `assert_never`, so the type check (mypy strict) fails
while a family has no words. `kind` only names the facts in the verdict JSON; nothing
dispatches on it.

    RowFacts              the union
    closed_facts(facts)   a row's facts (`MetricVerdict.facts`, typed by their base class:
                          gate/verdict.py cannot import the judges, which import it) as a
                          member of the union; TypeError for facts that are not one
"""

from __future__ import annotations

from typing import TypeAlias, cast, get_args

from .comparability import (
    AddedFacts,
    BaselineFailedFacts,
    ConfigChangedFacts,
    DefinitionChangedFacts,
    OtherClassFacts,
    RemovedFacts,
    RunFailedFacts,
    SkippedFacts,
)
from .judges.compile_cost import (
    CompileCpuFacts,
    CompileInstructionsFacts,
    CompileWallFacts,
    CompileWorkFacts,
)
from .judges.cuda_graphs import CudaGraphFacts
from .judges.diagnostics import DdpSplitFacts, FallbackFacts, GraphBreakFacts, RecompileFacts
from .judges.memory import MemoryFacts
from .judges.numerics import NumericsFacts
from .judges.speed_facts import SpeedFacts
from .judges.step_work import StepWorkFacts
from .judges.torch_state import TorchStateFacts
from .row_facts_base import RowFactsBase
from .rules import MissingFacts

RowFacts: TypeAlias = (
    # the subject's comparability (gate/comparability.py, gate/rules.py)
    MissingFacts
    | RunFailedFacts
    | AddedFacts
    | RemovedFacts
    | SkippedFacts
    | OtherClassFacts
    | BaselineFailedFacts
    | ConfigChangedFacts
    | DefinitionChangedFacts
    # the judges (gate/judges/)
    | SpeedFacts
    | CompileWallFacts
    | CompileCpuFacts
    | CompileInstructionsFacts
    | CompileWorkFacts
    | StepWorkFacts
    | GraphBreakFacts
    | RecompileFacts
    | FallbackFacts
    | DdpSplitFacts
    | CudaGraphFacts
    | NumericsFacts
    | MemoryFacts
    | TorchStateFacts
)

_MEMBERS: tuple[type, ...] = get_args(RowFacts)


def closed_facts(facts: RowFactsBase) -> RowFacts:
    """`facts` as the member of `RowFacts` it is (tests/unit/gate/test_row_facts.py checks that
    every facts class defined is one); TypeError for one that is not."""
    if not isinstance(facts, _MEMBERS):
        raise TypeError(f"{type(facts).__name__} is not a member of RowFacts (gate/row_facts.py)")
    return cast(RowFacts, facts)
