"""What one measuring process reported of one side: the `eager` or `variant` part of a
child's report (child/protocol.ChildReport), typed once at the parent's door
(run/child_runs.py) so that the recorders (document.py, processes.py, compile_cost.py) read
attributes, never keys of the child's JSON.

The child runs the user's code: whatever it wrote there is read here as untrusted. A part
of another shape is a ProcessReportError naming the first field that is wrong
(`variant.timed.compiled.samples is not a list of numbers`), one line, which the run makes
that step's or variant's error. The work is bounded: the report was read within the child
report's limits (bounded_json.py), this walks only the fields it names, each to the depth
its type has, and the non-finite numbers it keeps are the first MAX_ERRORS (model.py).

    timed               side → TimedSide (samples_ms, rounds): eager, eager_b, compiled and
                        the yardsticks (child/timing.py); empty for a counting pass
    warmup_s …          the warm-up seconds, peaks, CPUs, phase seconds as the child wrote
    compile             the compile record (child/measure.py): windows, counts, what was
                        saved and counted; read leniently, as compile_cost.py always read
                        it: a value of another type is no value (compile_cost.CompileRecord)
    torch_state, step_work, distributed
                        typed as the document's own parts (model.py)
    non_finite          where the part holds a NaN or an infinity (the first MAX_ERRORS):
                        such a part is never recorded (the run makes it the measurement's
                        failure, run/child_failure.not_finite), so nothing else of it is typed
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeVar

from ..schemas import MAX_ERRORS
from .compile_cost import CompileRecord
from .model import (
    DistributedRun,
    Model,
    Numerics,
    StepWork,
    TorchState,
    non_finite_paths,
    part_of,
)

# Each side a process may time (child/measure.py, child/measure_pair.py, child/timing.py).
TIMED_SIDES = ("eager", "eager_b", "compiled", "yardstick", "yardstick_launch")
# Every key a process's part may hold (child/measure.py, measure_pair.py, main.py, ranks.py).
PROCESS_KEYS = (
    "timed",
    "warmup_s",
    "eager_warmup_s",
    "peak_bytes",
    "eager_peak_bytes",
    "cpus",
    "phases_s",
    "late_recompile_s",
    "epoch_indices",
    "regional_absent",
    "compile",
    "torch_state",
    "step_work",
    "distributed",
)
MAX_FIELD_CHARS = 500  # a reason the child gives (regional_absent), as the document keeps it


class ProcessReportError(ValueError):
    """A process's part the parent cannot read: the first field of another shape, named."""


@dataclass(frozen=True)
class TimedSide:
    """One side's timed iterations, in the order they ran: each sample's milliseconds and
    the round it was timed in."""

    samples_ms: tuple[float, ...]
    rounds: tuple[int, ...]


@dataclass(frozen=True)
class ProcessReport:
    """One process's measurement of one side, typed (the module docstring)."""

    timed: Mapping[str, TimedSide] = field(default_factory=lambda: MappingProxyType({}))
    warmup_s: tuple[float, ...] | None = None
    eager_warmup_s: tuple[float, ...] | None = None
    peak_bytes: int | None = None
    eager_peak_bytes: int | None = None
    cpus: tuple[int, ...] | None = None
    phases_s: Mapping[str, float] | None = None
    late_recompile_s: float | None = None
    regional_absent: str | None = None
    compile: CompileRecord = field(default_factory=CompileRecord)
    torch_state: TorchState | None = None
    step_work: StepWork | None = None
    distributed: DistributedRun | None = None
    non_finite: tuple[tuple[str, str], ...] = ()

    def side(self, name: str) -> TimedSide:
        """The side `name`'s timing; ProcessReportError when the process did not time it."""
        found = self.timed.get(name)
        if found is None:
            raise ProcessReportError(f"timed.{name}: not reported by this process")
        return found

    def without_compile(self) -> ProcessReport:
        """This part without its compile window: the other side of a paired child compiled
        in the same process, so its compile time is no sample (run/step_measurement.py)."""
        return replace(self, compile=CompileRecord(), warmup_s=None, eager_warmup_s=None)

    @classmethod
    def from_json(cls, raw: Any, where: str) -> ProcessReport:
        """The part `raw` (the child's JSON) typed; ProcessReportError names the first
        problem under `where` (`eager`, `variant`, `sides.head.variant`)."""
        if not isinstance(raw, dict):
            raise ProcessReportError(f"{where} is not a JSON object")
        non_finite = tuple(non_finite_paths(raw, MAX_ERRORS))
        if non_finite:  # never recorded: the measurement's error says where (the docstring)
            return cls(non_finite=non_finite)
        unknown = sorted(set(raw) - set(PROCESS_KEYS))
        if unknown:
            raise ProcessReportError(f"{where}: unknown key {_names(unknown)}")
        timed = raw.get("timed", {})
        if not isinstance(timed, dict):
            raise ProcessReportError(f"{where}.timed is not a JSON object")
        other = sorted(set(timed) - set(TIMED_SIDES))
        if other:
            raise ProcessReportError(f"{where}.timed: unknown side {_names(other)}")
        compile_record = raw.get("compile") or {}
        if not isinstance(compile_record, dict):
            raise ProcessReportError(f"{where}.compile is not a JSON object")
        regional_absent = raw.get("regional_absent")
        return cls(
            timed=MappingProxyType(
                {name: _timed_side(timed[name], f"{where}.timed.{name}") for name in timed}
            ),
            warmup_s=_numbers(raw.get("warmup_s"), f"{where}.warmup_s"),
            eager_warmup_s=_numbers(raw.get("eager_warmup_s"), f"{where}.eager_warmup_s"),
            peak_bytes=_count(raw.get("peak_bytes"), f"{where}.peak_bytes"),
            eager_peak_bytes=_count(raw.get("eager_peak_bytes"), f"{where}.eager_peak_bytes"),
            cpus=_counts(raw.get("cpus"), f"{where}.cpus"),
            phases_s=_seconds_by_name(raw.get("phases_s"), f"{where}.phases_s"),
            late_recompile_s=_number(raw.get("late_recompile_s"), f"{where}.late_recompile_s"),
            regional_absent=(
                str(regional_absent)[:MAX_FIELD_CHARS] if regional_absent is not None else None
            ),
            compile=CompileRecord.of(compile_record),
            torch_state=_part(TorchState, raw.get("torch_state"), f"{where}.torch_state"),
            step_work=_part(StepWork, raw.get("step_work"), f"{where}.step_work"),
            distributed=_part(DistributedRun, raw.get("distributed"), f"{where}.distributed"),
        )


def _names(keys: list[Any]) -> str:
    shown = ", ".join(" ".join(str(key).split())[:80] for key in keys[:5])  # one line
    return shown + (f" (and {len(keys) - 5} more)" if len(keys) > 5 else "")


def _is_number(value: Any) -> bool:
    """A JSON number (a part holding NaN or an infinity was set apart before: non_finite)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _timed_side(raw: Any, where: str) -> TimedSide:
    if not isinstance(raw, dict):
        raise ProcessReportError(f"{where} is not a JSON object")
    samples, rounds = raw.get("samples"), raw.get("rounds")
    if not isinstance(samples, list) or not all(_is_number(v) for v in samples):
        raise ProcessReportError(f"{where}.samples is not a list of numbers")
    if not isinstance(rounds, list) or not all(_is_count(r) for r in rounds):
        raise ProcessReportError(f"{where}.rounds is not a list of integers >= 0")
    if len(rounds) != len(samples):
        raise ProcessReportError(f"{where}: {len(samples)} samples but {len(rounds)} rounds")
    return TimedSide(tuple(samples), tuple(rounds))


def _numbers(raw: Any, where: str) -> tuple[float, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(_is_number(v) for v in raw):
        raise ProcessReportError(f"{where} is not a list of numbers")
    return tuple(raw)


def _counts(raw: Any, where: str) -> tuple[int, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(_is_count(v) for v in raw):
        raise ProcessReportError(f"{where} is not a list of integers >= 0")
    return tuple(raw)


def _count(raw: Any, where: str) -> int | None:
    if raw is not None and not _is_count(raw):
        raise ProcessReportError(f"{where} is not an integer >= 0")
    return raw  # type: ignore[no-any-return]


def _number(raw: Any, where: str) -> float | None:
    if raw is None:
        return None
    if not _is_number(raw):
        raise ProcessReportError(f"{where} is not a number")
    return raw  # type: ignore[no-any-return]


def _seconds_by_name(raw: Any, where: str) -> Mapping[str, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(_is_number(v) for v in raw.values()):
        raise ProcessReportError(f"{where} is not an object of seconds")
    return MappingProxyType(dict(raw))


def numerics_of(raw: Any, where: str = "numerics") -> Numerics | None:
    """The variant's numerics check (the child's `numerics`, child/numerics.py) typed, None
    when it sent none. A compiled step that produces NaN fails its numerics: the distances
    of its worst tensors are then null (the schema's "not a finite number"), not a NaN in
    the document. ProcessReportError names a part of another shape."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProcessReportError(f"{where} is not a JSON object")
    worst = raw.get("worst")
    if worst is not None:
        if not isinstance(worst, list) or not all(isinstance(w, dict) for w in worst):
            raise ProcessReportError(f"{where}.worst is not a list of JSON objects")
        raw = {**raw, "worst": [{k: _finite_or_none(v) for k, v in w.items()} for w in worst]}
    return _part(Numerics, raw, where)


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


PartT = TypeVar("PartT", bound=Model)


def _part(cls: type[PartT], raw: Any, where: str) -> PartT | None:
    """A part the document types itself (model.py), or ProcessReportError naming it: the
    document's classes read a schema-valid shape, which the child's is not bound to be."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ProcessReportError(f"{where} is not a JSON object")
    try:
        return part_of(cls, raw)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise ProcessReportError(f"{where}: not a {cls.__name__}: {detail}") from None
