"""Measure one step on one or several sides: the eager references, then each variant, each
process in its own child; with several sides (a paired run), each process once per side, the
sides alternating A B B A A B … so that what the machine does meanwhile falls on all alike.

A failure of one child, or of the parent while recording what it returned, becomes that
side's step's or variant's error; the others still run. An interruption propagates (the
launcher has killed the child): the orchestration (orchestrate.py) marks what it cut short.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, TextIO, TypeVar

from ..child.protocol import ChildSide, ChildSpec, EntryPoint
from ..cleanup import remove_tree
from ..config import StepConfig, Variant
from ..report.child_failure_words import failure_words
from ..results.compile_cost import ARTIFACTS, FRESH, REUSED, SHARED
from ..results.document import (
    add_process,
    eager_entry,
    finish_step,
    variant_entry,
    with_head_vs_base,
    with_process,
    with_regional,
)
from ..results.model import FailureStage
from ..results.model import Variant as ResultVariant
from ..results.step_record import StepRecord, failed_variant
from .artifacts_handover import hand_over
from .child_failure import (
    FAILED_EAGERLY,
    ArtifactsRefused,
    ChildFailure,
    NoFirstProcess,
    NotMeasured,
    NotRecorded,
    NotRun,
    not_finite,
)
from .child_runs import ChildError, Measured, one_line, run_child, run_pair_child
from .launcher import Launcher, hand_to_children

T = TypeVar("T")

REFERENCE_NAME = "numerics-reference.pt"  # the eager process's float64 reference


@dataclass
class StepSide:
    """One side's measurement of one step: what `measure_step` needs, and the step's record
    it fills in (kept after every child: `save` writes the side's document from it)."""

    step: StepConfig
    entry: EntryPoint
    repo_root: Path
    launcher: Launcher
    record: StepRecord
    label: str = ""
    save: Callable[[], None] = lambda: None
    # Where the eager process leaves the float64 reference for every variant's numerics
    # (child/numerics.py): set by measure_step when the children can read the host's files.
    reference_dir: Path | None = None

    @property
    def reference_path(self) -> str | None:
        return None if self.reference_dir is None else str(self.reference_dir / REFERENCE_NAME)

    @property
    def tag(self) -> str:
        """How progress lines name the step: `[gate]`, or `[gate · base]` in a paired run."""
        return f"[{self.step.name} · {self.label}]" if self.label else f"[{self.step.name}]"

    @property
    def child_label(self) -> str:
        return f"{self.step.name}@{self.label}" if self.label else self.step.name

    def base_spec(
        self,
        kind: str,
        *,
        device: str | None = None,
        variant: dict[str, Any] | None = None,
        sides: tuple[ChildSide, ...] = (),
    ) -> ChildSpec:
        """The spec of one of this side's processes: the fields every one of them shares, the
        device (once eager has resolved `auto`, the one it ran on) and a kind's own fields."""
        return ChildSpec(
            kind=kind,
            repo_root=str(self.repo_root),
            entry=self.entry,
            step=self.step.name,
            device=device or self.step.device,
            settings=self.step.measurement_settings(),
            variant=variant,
            sides=sides,
        )


def alternate(sides: Sequence[T], slot: int) -> list[T]:
    """The order the sides run in at this slot of a step's schedule: A B, then B A, then
    A B … (A B B A A B B A: a drift over the run falls on both sides alike)."""
    return list(sides) if slot % 2 == 0 else list(reversed(sides))


def measure_step(sides: Sequence[StepSide], *, stream: TextIO, in_process: bool = False) -> None:
    """Eager references, then each variant, each process in its own child, into each side's
    `record`; with several sides, each process is run once per side, alternating. With
    `in_process` and two sides (a base and a head on one torch), the eager references and
    the variants' warm timing processes each measure both sides in one child
    (child/measure_pair.py); a variant's cold compiles stay one side per process, where each
    compile is cold and its diagnostics and numerics are the side's own.

    A failure of one child, or of the parent while recording what it returned, becomes that
    side's step's or variant's error; the others still run. An interruption propagates
    (the launcher has killed the child): run_sides marks what it cut short.
    """
    with contextlib.ExitStack() as stack:
        for side in sides:
            if _shares_reference(side):
                side.reference_dir = stack.enter_context(_reference_dir(side.launcher))
        try:
            _measure_step(sides, stream, in_process)
        finally:  # the folders go with the step
            for side in sides:
                side.reference_dir = None


def _shares_reference(side: StepSide) -> bool:
    """Whether the step's eager process computes the float64 reference for its variants: the
    step checks numerics and its children read and write the host's files."""
    numerics = side.step.measurement_settings().get("numerics") or {}
    return bool(numerics.get("enabled")) and side.launcher.shares_host_paths


@dataclass
class _EagerRun:
    """One side's eager references, a process at a time: what they measured, or the error
    that ended them."""

    side: StepSide
    measured: list[Measured] = field(default_factory=list)
    error: ChildFailure | None = None

    def runs(self, number: int) -> bool:
        return self.error is None and number <= self.side.step.eager_processes

    def run_process(self, number: int, stream: TextIO) -> None:
        side = self.side
        stream.write(f"{side.tag} eager reference {number}/{side.step.eager_processes}\n")
        spec = side.base_spec("eager")
        if number == 1 and side.reference_path is not None:
            spec = replace(spec, numerics_reference_out=side.reference_path)
        label = f"{side.child_label}/eager#{number}"
        measured, failed = run_child(side.launcher, spec, side.step, label)
        self.error = failed.failure if failed is not None else None
        if measured is not None:
            self.measured.append(measured)


def _measure_step(sides: Sequence[StepSide], stream: TextIO, in_process: bool) -> None:
    slot = 0
    runs = [_EagerRun(side) for side in sides]
    processes = max(s.step.eager_processes for s in sides)
    together = in_process and len(sides) == 2
    for number in range(1, processes + 1):
        if together and all(run.runs(number) for run in runs):
            stream.write(
                f"[{sides[0].step.name}] eager reference {number}: base and head in one process\n"
            )
            parts = [ChildSide(s.label, str(s.repo_root), s.entry) for s in sides]
            measured, error = _run_pair_child(sides, parts, None, f"eager#{number}")
            for run in runs:
                if error is not None:
                    run.error = error.failure
                else:
                    run.measured.append(measured[run.side.label])
            slot += 1
            continue
        for run in alternate(runs, slot):
            if run.runs(number):
                run.run_process(number, stream)
        slot += 1
    measuring = [run.side for run in runs if _record_eager_side(run, stream)]
    for side in measuring:
        side.save()
    for variant_id in dict.fromkeys(v.id for s in measuring for v in s.step.variants):
        slot = _measure_variant_sides(measuring, variant_id, slot, stream, in_process=in_process)
    for side in measuring:
        finish_record(side.record, stream)


def _record_eager_side(run: _EagerRun, stream: TextIO) -> bool:
    """Record a side's eager references into its step; False (the step marked as failed)
    when a child failed or what it measured cannot be recorded."""
    record, error = run.side.record, run.error
    for measured in run.measured:  # checked before the statistics, which a NaN sample would crash
        error = error or not_finite(measured.eager, "eager.")
    if error is None:
        _, error = _record(_record_eager, record, run.measured)
    if error is None and record.eager is not None:
        error = not_finite(record.eager, "eager.")
    if error is None:
        return True
    record.eager = None  # whatever was recorded may hold the NaN
    record.mark_not_run(*ChildFailure(NotRun(FAILED_EAGERLY)).recorded())
    failure = error.at(FailureStage.EAGER)
    record.fail(*failure.recorded())
    stream.write(f"{run.side.tag} error: {failure_words(failure)}\n")
    return False


@dataclass
class _VariantRun:
    """One side's measurement of one variant, a process at a time (see
    `_measure_variant_sides`)."""

    side: StepSide
    variant: Variant
    cache_dir: Path | None
    entry: ResultVariant | None = None
    error: ChildFailure | None = None  # why the variant failed, where

    @property
    def spec(self) -> ChildSpec:
        """The first process's spec: it compiles cold, with every diagnostic and the
        numerics, against the float64 reference of the step's eager process when there is
        one."""
        spec = self.side.base_spec(
            "variant", device=self.side.record.device, variant=_variant_spec(self.variant)
        )
        save = "save" if self.artifacts_process is not None else ""
        return replace(spec, numerics_reference=self.side.reference_path, cache_artifacts=save)

    @property
    def artifacts_process(self) -> int | None:
        """The process that starts from the first one's compile-cache artifacts (the one
        after the cold compiles), or None: not asked for, or the run shares one cache."""
        step = self.side.step
        if not step.cache_artifacts or self.cache_dir is None:
            return None
        return step.cold_compiles + 1

    @property
    def timing_spec(self) -> ChildSpec:
        """A later process's spec: it only times (no numerics, no epoch end, no memory
        passes: the first process measured them)."""
        spec = self.spec
        numerics = {**(spec.settings.get("numerics") or {}), "enabled": False}
        settings = {**spec.settings, "numerics": numerics, "epoch_length": None}
        return replace(
            spec, timing_only=True, numerics_reference=None, settings=settings, cache_artifacts=""
        )

    @property
    def pair_side(self) -> ChildSide:
        """This side's part of a child that times both sides: its variant and the cache it
        reuses."""
        side = self.side
        cache = str(self.cache_dir) if self.cache_dir is not None else None
        return ChildSide(
            side.label, str(side.repo_root), side.entry, _variant_spec(self.variant), cache
        )

    def run_process(self, number: int, stream: TextIO) -> None:
        """The variant's process `number`: the first compiles cold with every diagnostic and
        the numerics; the first `cold_compiles` compile cold, each in a fresh cache; the
        others reuse the cache the first compiled into and only time."""
        step, launcher = self.side.step, self.side.launcher
        label = f"{self.side.child_label}/{self.variant.id}"
        if number == 1:
            stream.write(f"{self.side.tag} variant {self.variant.id}\n")
            measured, failed = run_child(launcher, self.spec, step, label, cache_dir=self.cache_dir)
            error = self.failed(failed)
            if measured is not None:  # else `error` says why
                error = not_finite(measured.variant)
            if measured is not None and error is None:
                first_cache = FRESH if self.cache_dir is not None else SHARED
                self.entry, error = _record(
                    variant_entry,
                    self.variant,
                    measured.variant,
                    measured.report.diagnostics,
                    measured.numerics,
                    first_cache,
                )
            self.error = error
            return
        total = step.variant_processes
        if number == self.artifacts_process and self.cache_dir is not None:
            with _variant_cache(launcher) as own:
                assert own is not None  # no shared cache: artifacts_process says so
                handed = hand_over(self.cache_dir, own)
                if handed.copied is not None:
                    stream.write(
                        f"{self.side.tag} variant {self.variant.id}: from the cache artifacts "
                        f"({handed.copied / 1e6:.1f} MB), timing process {number}/{total}\n"
                    )
                    spec = replace(self.timing_spec, cache_artifacts="load")
                    measured, failed = run_child(
                        launcher, spec, step, f"{label}#{number}", cache_dir=own
                    )
                    error = self.failed(failed)
                    if measured is not None:  # else `error` says why
                        error = self.add_process(measured, ARTIFACTS)
                    if error is not None:
                        self.error = error.at(FailureStage.TIMING_PROCESS, number, total)
                    return
            if handed.refused is not None:
                self.error = ChildFailure(ArtifactsRefused(handed.refused))
                return
            # missing: the first process's record says why; this one reuses the cache
        cold = number <= step.cold_compiles and self.cache_dir is not None
        how = "cold compile, " if cold else ""
        stream.write(
            f"{self.side.tag} variant {self.variant.id}: {how}timing process {number}/{total}\n"
        )
        launcher_cache = (
            _variant_cache(launcher) if cold else contextlib.nullcontext(self.cache_dir)
        )
        with launcher_cache as own:
            measured, failed = run_child(
                launcher, self.timing_spec, step, f"{label}#{number}", cache_dir=own
            )
        error = self.failed(failed)
        if measured is not None:  # else `error` says why
            cache = FRESH if cold else (REUSED if self.cache_dir is not None else SHARED)
            error = self.add_process(measured, cache)
        if error is not None:
            self.error = error.at(FailureStage.TIMING_PROCESS, number, total)

    def run_regional(self, stream: TextIO) -> None:
        """One more process, after the variant's others: the same variant compiling only the
        model's repeated blocks (child/training.py), in an empty cache, timed against eager;
        into the entry's `regional` lever. Its failure is the lever's, not the variant's."""
        step, launcher = self.side.step, self.side.launcher
        if self.entry is None or self.error is not None:
            return
        stream.write(f"{self.side.tag} variant {self.variant.id}: regional compilation\n")
        spec = self.timing_spec
        assert spec.variant is not None  # a variant's spec has one
        spec = replace(spec, variant={**spec.variant, "compile_target": "blocks"})
        label = f"{self.side.child_label}/{self.variant.id}#regional"
        with _variant_cache(launcher) as own:
            measured, failed = run_child(launcher, spec, step, label, cache_dir=own)
        failure = failed.failure if failed is not None else None
        part = (
            measured.variant
            if measured is not None and measured.report.variant is not None
            else None
        )
        if part is not None and failure is None and part.regional_absent is None:
            failure = not_finite(part)
        recorded = failure.recorded() if failure is not None else None
        entry, problem = _record(with_regional, self.entry, part, recorded)
        if entry is not None:
            self.entry = entry
        if problem is not None:
            said = failure_words(problem)
            stream.write(f"{self.side.tag} variant {self.variant.id}: regional: {said}\n")

    def failed(self, error: ChildError | None) -> ChildFailure | None:
        """A child's error as this variant's failure."""
        return error.failure if error is not None else None

    def add_process(
        self, measured: Measured, cache: str, *, compiled: bool = True
    ) -> ChildFailure | None:
        """One more timing process into the entry, or why it cannot be recorded (`compiled`
        False: the process compiled both sides, so its compile window is no sample)."""
        error = not_finite(measured.variant)
        if error is not None:
            return error
        if self.entry is None:
            return ChildFailure(NoFirstProcess())
        timing = measured.variant if compiled else measured.variant.without_compile()
        entry, error = _record(add_process, self.entry, timing, cache, measured.head_vs_base)
        if entry is not None:
            self.entry = entry
        return error

    def finish(self, stream: TextIO) -> None:
        """Into the step's record: the entry, or the variant's error."""
        if self.error is None and self.entry is not None:
            self.error = not_finite(self.entry)
        entry = self.entry
        if self.error is not None or entry is None:
            failure = self.error or ChildFailure(NotMeasured())
            entry = failed_variant(self.variant, *failure.recorded())
            said = failure_words(failure)
            stream.write(f"{self.side.tag} variant {self.variant.id} error: {said}\n")
        self.side.record.variants.append(entry)
        self.side.save()


def _measure_variant_sides(
    sides: Sequence[StepSide], variant_id: str, slot: int, stream: TextIO, in_process: bool = False
) -> int:
    """One variant on every side that declares it: process 1 of each side, then process 2 …,
    the sides alternating. A later process that fails fails that side's variant: a compiled
    step that crashes or hangs now and then is an error, not a smaller sample. A
    measurement that is not a finite number is that variant's error, found before the
    statistics (which it would crash). Returns the next slot of the step's schedule."""
    with contextlib.ExitStack() as stack:
        runs = []
        for side in sides:
            variant = next((v for v in side.step.variants if v.id == variant_id), None)
            if variant is not None:
                cache_dir = stack.enter_context(_variant_cache(side.launcher))
                runs.append(_VariantRun(side, variant, cache_dir))
        processes = max(run.side.step.variant_processes for run in runs)
        for number in range(1, processes + 1):
            if in_process and _together(runs, number):
                _run_pair_process(runs, number, stream)
                slot += 1
                continue
            for run in alternate(runs, slot):
                if run.error is None and number <= run.side.step.variant_processes:
                    run.run_process(number, stream)
            slot += 1
        for run in runs:
            if run.side.step.regional:
                run.run_regional(stream)
            run.finish(stream)
    return slot


def _together(runs: Sequence[_VariantRun], number: int) -> bool:
    """Whether process `number` of a variant measures both sides in one child: a warm timing
    process (after the first, past the cold compiles) that both sides still run."""
    return (
        len(runs) == 2
        and number > 1
        and all(
            run.error is None
            and run.entry is not None
            and number <= run.side.step.variant_processes
            and not (number <= run.side.step.cold_compiles and run.cache_dir is not None)
            for run in runs
        )
    )


def _run_pair_process(runs: Sequence[_VariantRun], number: int, stream: TextIO) -> None:
    """Process `number` of a variant, base and head in one child; each side's timing
    recorded as its own timing process."""
    sides = [run.side for run in runs]
    total = max(run.side.step.variant_processes for run in runs)
    vid = runs[0].variant.id
    stream.write(
        f"[{sides[0].step.name}] variant {vid}: timing process {number}/{total}, base and head "
        "in one process\n"
    )
    parts = [run.pair_side for run in runs]
    measured, failed = _run_pair_child(sides, parts, runs[-1].cache_dir, f"{vid}#{number}")
    for run in runs:
        found = run.failed(failed)
        if found is None:
            cache = REUSED if run.cache_dir is not None else SHARED
            found = run.add_process(measured[run.side.label], cache, compiled=False)
        if found is not None:
            run.error = found.at(FailureStage.TIMING_PROCESS, number, total)


def _variant_spec(variant: Variant) -> dict[str, Any]:
    """What a child needs of a variant (ChildSpec.variant: the child's JSON)."""
    return {
        "id": variant.id,
        "compile_kwargs": variant.compile_kwargs(),
        "compile_target": variant.compile_target,
    }


R = TypeVar("R")


def _run_pair_child(
    sides: Sequence[StepSide],
    parts: Sequence[ChildSide],
    cache_dir: Path | None,
    label: str,
) -> tuple[dict[str, Measured], None] | tuple[dict[str, Measured], ChildError]:
    """One child measuring both sides, run by the head's launcher: the eager references
    (`parts` without a variant) or a variant's warm timing (`parts`: each side's variant
    and cache; `cache_dir` the head's); what each side measured, by side label, or the
    error (child_runs.run_pair_child)."""
    head = sides[-1]
    spec = head.base_spec("pair", device=head.record.device, sides=tuple(parts))
    if any(part.variant is not None for part in parts):
        settings = {**spec.settings, "epoch_length": None}
        spec = replace(spec, timing_only=True, settings=settings)
    label = f"{head.step.name}@pair/{label}"
    return run_pair_child(head.launcher, spec, head.step, label, cache_dir=cache_dir)


def _record(record: Callable[..., R], *args: object) -> tuple[R, None] | tuple[None, ChildFailure]:
    """The parent-side recording of what a child measured: its value, or its exception as
    the failure of that step or variant (never the end of the whole run)."""
    try:
        return record(*args), None
    except Exception as exc:
        return None, ChildFailure(NotRecorded(one_line(exc)))


def _record_eager(record: StepRecord, measured: Sequence[Measured]) -> None:
    eager = with_head_vs_base(eager_entry(measured[0].eager), measured[0].head_vs_base)
    for other in measured[1:]:
        eager = with_process(eager, other.eager, other.head_vs_base)
    record.device = measured[0].report.device
    record.eager = eager


def finish_record(record: StepRecord, stream: TextIO) -> None:
    """The step's summary into its record, or the step's error when it cannot be made."""
    summary, error = _record(finish_step, record.as_step())
    if summary is not None:
        record.summarize(summary)
    if error is not None:
        failure = error.at(FailureStage.SUMMARY)
        record.fail(*failure.recorded())
        stream.write(f"[{record.name}] error: {failure_words(failure)}\n")


@contextlib.contextmanager
def _variant_cache(launcher: Launcher) -> Iterator[Path | None]:
    """An Inductor cache for one variant's processes: empty for its first (a cold compile),
    kept for the others. None when the run shares one cache (--inductor-cache)."""
    if launcher.shared_cache_dir is not None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="compilegate-cache-"))
    hand_to_children(launcher, folder)
    try:
        yield folder
    finally:  # the children wrote it (in a container: bind-mounted writable)
        left = remove_tree(folder)
        if left is not None:
            launcher.stream.write(f"warning: {left}\n")


@contextlib.contextmanager
def _reference_dir(launcher: Launcher) -> Iterator[Path]:
    """A folder for one step's float64 reference, removed after its last variant."""
    folder = Path(tempfile.mkdtemp(prefix="compilegate-reference-"))
    hand_to_children(launcher, folder)
    try:
        yield folder
    finally:
        left = remove_tree(folder)
        if left is not None:
            launcher.stream.write(f"warning: {left}\n")
