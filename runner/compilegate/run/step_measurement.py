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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, TextIO

from ..child.protocol import ChildSide, ChildSpec, EntryPoint
from ..cleanup import remove_tree
from ..config import StepConfig, Variant
from ..results.compile_cost import FRESH, REUSED, SHARED
from ..results.document import (
    add_process,
    eager_entry,
    finish_step,
    non_finite_error,
    process_summary,
    variant_entry,
    variant_skeleton,
)
from ..results.processes import head_vs_base
from .launcher import ChildOutcome, Launcher

REFERENCE_NAME = "numerics-reference.pt"  # the eager process's float64 reference


@dataclass
class StepSide:
    """One side's measurement of one step: what `measure_step` needs and fills in."""

    step: StepConfig
    entry: EntryPoint
    repo_root: Path
    launcher: Launcher
    step_doc: dict[str, Any]
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


def alternate(sides: Sequence[Any], slot: int) -> list[Any]:
    """The order the sides run in at this slot of a step's schedule: A B, then B A, then
    A B … (A B B A A B B A: a drift over the run falls on both sides alike)."""
    return list(sides) if slot % 2 == 0 else list(reversed(sides))


def measure_step(sides: Sequence[StepSide], *, stream: TextIO, in_process: bool = False) -> None:
    """Eager references, then each variant, each process in its own child, into each side's
    `step_doc`; with several sides, each process is run once per side, alternating. With
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


def _measure_step(sides: Sequence[StepSide], stream: TextIO, in_process: bool) -> None:
    slot = 0
    eager_docs: dict[int, list[dict[str, Any]]] = {id(s): [] for s in sides}
    errors: dict[int, str | None] = {id(s): None for s in sides}
    processes = max(s.step.eager_processes for s in sides)
    together = in_process and len(sides) == 2
    for number in range(1, processes + 1):
        if together and all(
            errors[id(s)] is None and number <= s.step.eager_processes for s in sides
        ):
            stream.write(
                f"[{sides[0].step.name}] eager reference {number}: base and head in one process\n"
            )
            documents, error = _run_pair_child(sides, None, f"eager#{number}")
            for side in sides:
                if error is not None:
                    errors[id(side)] = error
                else:
                    eager_docs[id(side)].append(documents[side.label])
            slot += 1
            continue
        for side in alternate(sides, slot):
            if errors[id(side)] is not None or number > side.step.eager_processes:
                continue
            total = side.step.eager_processes
            stream.write(f"{side.tag} eager reference {number}/{total}\n")
            spec = ChildSpec(kind="eager", **_base_spec(side))
            if number == 1 and side.reference_path is not None:
                spec = replace(spec, numerics_reference_out=side.reference_path)
            document, errors[id(side)] = _run_child(
                side.launcher,
                spec,
                side.step,
                f"{side.child_label}/eager#{number}",
            )
            if document is not None:
                eager_docs[id(side)].append(document)
        slot += 1
    measuring = [
        s for s in sides if _record_eager_side(s, eager_docs[id(s)], errors[id(s)], stream)
    ]
    for side in measuring:
        side.save()
    for variant_id in dict.fromkeys(v.id for s in measuring for v in s.step.variants):
        slot = _measure_variant_sides(measuring, variant_id, slot, stream, in_process=in_process)
    for side in measuring:
        finish_step_doc(side.step_doc, stream)


def _base_spec(side: StepSide) -> dict[str, Any]:
    """The ChildSpec fields every process of a side's step shares."""
    return {
        "repo_root": str(side.repo_root),
        "entry": side.entry,
        "step": side.step.name,
        "device": side.step.device,
        "settings": side.step.measurement_settings(),
    }


def _record_eager_side(
    side: StepSide, eager_docs: list[dict[str, Any]], error: str | None, stream: TextIO
) -> bool:
    """Record a side's eager references into its step; False (the step marked as failed)
    when a child failed or what it measured cannot be recorded."""
    step_doc = side.step_doc
    for raw in eager_docs:  # checked before the statistics, which a NaN sample would crash
        error = error or non_finite_error(raw["eager"], "eager.")
    if error is None:
        _, error = _record(_record_eager, step_doc, eager_docs)
    if error is None:
        error = non_finite_error(step_doc["eager"], "eager.")
    if error is None:
        return True
    step_doc["eager"] = None  # whatever was recorded may hold the NaN
    mark_not_run(side.step, step_doc, "not run: the step failed eagerly")
    step_doc["error"] = f"eager: {error}"
    stream.write(f"{side.tag} error: {step_doc['error']}\n")
    return False


@dataclass
class _VariantRun:
    """One side's measurement of one variant, a process at a time (see
    `_measure_variant_sides`)."""

    side: StepSide
    variant: Variant
    cache_dir: Path | None
    entry: dict[str, Any] | None = None
    error: str | None = None

    @property
    def spec(self) -> ChildSpec:
        """The first process's spec: it compiles cold, with every diagnostic and the
        numerics, against the float64 reference of the step's eager process when there is
        one."""
        return ChildSpec(
            kind="variant",
            **{**_base_spec(self.side), "device": self.side.step_doc["device"]},
            variant=_variant_spec(self.variant),
            numerics_reference=self.side.reference_path,
        )

    @property
    def timing_spec(self) -> ChildSpec:
        """A later process's spec: it only times (no numerics, no epoch end, no memory
        passes: the first process measured them)."""
        spec = self.spec
        numerics = {**(spec.settings.get("numerics") or {}), "enabled": False}
        settings = {**spec.settings, "numerics": numerics, "epoch_length": None}
        return replace(spec, timing_only=True, numerics_reference=None, settings=settings)

    def run_process(self, number: int, stream: TextIO) -> None:
        """The variant's process `number`: the first compiles cold with every diagnostic and
        the numerics; the first `cold_compiles` compile cold, each in a fresh cache; the
        others reuse the cache the first compiled into and only time."""
        step, launcher = self.side.step, self.side.launcher
        label = f"{self.side.child_label}/{self.variant.id}"
        if number == 1:
            stream.write(f"{self.side.tag} variant {self.variant.id}\n")
            document, error = _run_child(launcher, self.spec, step, label, cache_dir=self.cache_dir)
            if document is not None:  # else `error` says why
                error = non_finite_error(document["variant"])
            if document is not None and error is None:
                first_cache = FRESH if self.cache_dir is not None else SHARED
                self.entry, error = _record(variant_entry, self.variant, document, first_cache)
            self.error = error
            return
        total = step.variant_processes
        cold = number <= step.cold_compiles and self.cache_dir is not None
        how = "cold compile, " if cold else ""
        stream.write(
            f"{self.side.tag} variant {self.variant.id}: {how}timing process {number}/{total}\n"
        )
        timing_spec = self.timing_spec
        launcher_cache = (
            _variant_cache(launcher) if cold else contextlib.nullcontext(self.cache_dir)
        )
        with launcher_cache as own:
            document, error = _run_child(
                launcher, timing_spec, step, f"{label}#{number}", cache_dir=own
            )
        if document is not None:  # else `error` says why
            error = non_finite_error(document["variant"])
        if document is not None and error is None:
            cache = FRESH if cold else (REUSED if self.cache_dir is not None else SHARED)
            _, error = _record(add_process, self.entry, document["variant"], cache)
        if error is not None:
            self.error = f"timing process {number}/{total}: {error}"

    def finish(self, stream: TextIO) -> None:
        """Into the step's document: the entry, or the variant's error."""
        if self.error is None and self.entry is not None:
            self.error = non_finite_error(self.entry)
        entry = self.entry
        if self.error is not None:
            entry = variant_skeleton(self.variant)
            entry.update(status="error", error=self.error)
            stream.write(f"{self.side.tag} variant {self.variant.id} error: {self.error}\n")
        self.side.step_doc["variants"].append(entry)
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
    variants = {run.side.label: _variant_spec(run.variant) for run in runs}
    caches = {run.side.label: run.cache_dir for run in runs}
    documents, error = _run_pair_child(sides, (variants, caches), f"{vid}#{number}")
    for run in runs:
        found = error
        document = documents.get(run.side.label) if error is None else None
        if found is None and document is not None:
            found = non_finite_error(document["variant"])
        if found is None and document is not None:
            cache = REUSED if run.cache_dir is not None else SHARED
            timing = _without_compile(document["variant"])
            _, found = _record(add_process, run.entry, timing, cache)
            # add_process raised (so `found` says why) unless the entry was there
            if found is None and run.entry is not None and "head_vs_base" in document:
                run.entry["processes"][-1]["head_vs_base"] = document["head_vs_base"]
        if found is not None:
            run.error = f"timing process {number}/{total}: {found}"


def _without_compile(measured: dict[str, Any]) -> dict[str, Any]:
    """A side's part of a paired child without its compile window: the other side compiled
    in the same process, before it or after it, so its compile time is no sample of a warm
    compile (the record's compile seconds read null)."""
    return {
        key: value
        for key, value in measured.items()
        if key not in ("compile", "warmup_s", "eager_warmup_s")
    }


def _variant_spec(variant: Variant) -> dict[str, Any]:
    """What a child needs of a variant (ChildSpec.variant)."""
    return {
        "id": variant.id,
        "compile_kwargs": variant.compile_kwargs(),
        "compile_target": variant.compile_target,
    }


def _run_pair_child(
    sides: Sequence[StepSide],
    variant: tuple[dict[str, Any], dict[str, Path | None]] | None,
    label: str,
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """One child measuring both sides (child/measure_pair.py), run by the head's launcher:
    the eager references (`variant` None) or a variant's warm timing (`variant`: each side's
    variant and cache, by side label); each side's part as a one-side child's document, by
    side label, or the error."""
    head = sides[-1]
    entries = []
    for side in sides:
        if variant is None:
            entries.append(ChildSide(side.label, str(side.repo_root), side.entry))
            continue
        cache = variant[1][side.label]
        entries.append(
            ChildSide(
                side.label,
                str(side.repo_root),
                side.entry,
                variant[0][side.label],
                str(cache) if cache is not None else None,
            )
        )
    full = ChildSpec(kind="pair", **_base_spec(head), sides=tuple(entries))
    if head.step_doc.get("device"):
        full = replace(full, device=head.step_doc["device"])
    if variant is not None:
        settings = {**full.settings, "epoch_length": None}
        full = replace(full, timing_only=True, settings=settings)
    cache_dir = variant[1][head.label] if variant is not None else None
    document, error = _run_child(
        head.launcher, full, head.step, f"{head.step.name}@pair/{label}", cache_dir=cache_dir
    )
    if error is not None or document is None:
        return {}, error
    parts = document.get("sides") or {}
    if set(parts) != {side.label for side in sides}:
        return {}, "the paired child did not return both sides"
    out = {role: {"device": document["device"], **part} for role, part in parts.items()}
    base, head_part = out[sides[0].label], out[head.label]
    kind = "eager" if variant is None else "variant"
    try:
        head_part["head_vs_base"] = head_vs_base(head_part[kind]["timed"], base[kind]["timed"])
    except Exception as exc:  # a sample list the ratio cannot read: the statistics say so
        return {}, f"compilegate could not record this measurement: {one_line(exc)}"
    return out, None


def _run_child(
    launcher: Launcher,
    spec: ChildSpec,
    step: StepConfig,
    label: str,
    *,
    cache_dir: Path | None = None,
) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """One child's document, or the one-line error it ended with: exactly one is None."""
    spec = replace(spec, limits=step.limits.to_dict())  # a container launcher applies them
    try:
        outcome = launcher.run(
            spec, label=label, timeout_s=step.timeout_s, env_opt_in=step.env, cache_dir=cache_dir
        )
    except Exception as exc:  # the parent's own failure to run it: this child's error only
        return None, f"compilegate could not run this child: {one_line(exc)}"
    error = _outcome_error(outcome)
    if error is not None:
        return None, error
    if outcome.report is None:  # _outcome_error asserts it away; this says it to the checker
        return None, "the child ended without a report"
    return outcome.report.to_json(), None  # what it measured: the recorders read JSON


def _record(record: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """The parent-side recording of a child's document: its value, or its exception as the
    one-line error of that step or variant (never the end of the whole run)."""
    try:
        return record(*args), None
    except Exception as exc:
        return None, f"compilegate could not record this measurement: {one_line(exc)}"


def _record_eager(step_doc: dict[str, Any], eager_docs: list[dict[str, Any]]) -> None:
    eager = eager_entry(eager_docs[0]["eager"])
    for other in eager_docs[1:]:
        eager["processes"].append(process_summary(eager_entry(other["eager"])))
    for record, document in zip(eager["processes"], eager_docs):
        if "head_vs_base" in document:  # base and head timed in one process
            record["head_vs_base"] = document["head_vs_base"]
    step_doc["device"] = eager_docs[0]["device"]
    step_doc["eager"] = eager


def finish_step_doc(step_doc: dict[str, Any], stream: TextIO) -> None:
    _, error = _record(finish_step, step_doc)
    if error is not None:
        step_doc.update(status="error", error=f"summary: {error}")
        stream.write(f"[{step_doc['name']}] error: {step_doc['error']}\n")


def mark_not_run(step: StepConfig, step_doc: dict[str, Any], reason: str) -> None:
    """The step failed or was never reached: it and every variant are errors."""
    step_doc.update(status="error", error=reason)
    step_doc["variants"] = []
    for variant in step.variants:
        skipped = variant_skeleton(variant)
        skipped.update(status="error", error=reason)
        step_doc["variants"].append(skipped)


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def _variant_cache(launcher: Launcher) -> Iterator[Path | None]:
    """An Inductor cache for one variant's processes: empty for its first (a cold compile),
    kept for the others. None when the run shares one cache (--inductor-cache)."""
    if launcher.shared_cache_dir is not None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="compilegate-cache-"))
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
    try:
        yield folder
    finally:
        left = remove_tree(folder)
        if left is not None:
            launcher.stream.write(f"warning: {left}\n")


def _outcome_error(outcome: ChildOutcome) -> str | None:
    if outcome.error is not None:
        last = last_line(outcome)
        return outcome.error + (f" (last output: {last})" if last else "")
    assert outcome.report is not None
    if outcome.report.status != "ok":
        return " ".join(str(outcome.report.error).split())
    return None


def last_line(outcome: ChildOutcome) -> str:
    for line in reversed(outcome.output_tail):
        if line.strip():
            return line.strip()[:300]
    return ""
