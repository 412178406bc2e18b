"""Drive a whole run: for each step, the eager references then each variant, each process in
a child.

Data flows one way: Config → (entries resolved) → child processes → result document,
written after every child so nothing already measured is lost.

A run measures one side (`run_config`) or several side by side (`run_sides`, paired mode:
the base and the head of a pull request, or two PyTorch versions): every process of a step
is then run once per side, the sides alternating A B B A A B …, so that what the machine
does meanwhile (load, clocks, heat) falls on both sides alike. Each side has its own tree,
launcher, Inductor caches and result document; nothing one side's children write reaches
another side's.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TextIO

from ..child.protocol import ChildSpec, EntryPoint
from ..config import Config, StepConfig
from ..errors import RunInterrupted, UsageError
from ..report.child_failure_words import failure_text, stopped_words
from ..results.document import DocumentHead, new_document, write_document
from ..results.model import ChildFailure as FailureRecord
from ..results.model import Environment, FailureStage, Pairing, RunHealth, part_of
from ..results.recommendation import withheld
from ..results.run_health import run_health
from ..results.step_record import StepRecord, failed_variant, not_run
from .child_env import measurement_variables
from .child_failure import RUN_ENDED, RUN_INTERRUPTED, ChildFailure, Interrupted, NotRun
from .child_runs import last_line
from .child_user import ChildUser
from .entry_check import resolve_entry
from .gpu_state import GpuSampler
from .host_git import head_commit
from .interrupts import as_interrupted
from .launcher import ChildLauncher, Launcher, close_launcher
from .machine_load import MachineLoad
from .machine_reading import reading_for
from .step_measurement import StepSide, finish_record, measure_step

PROBE_TIMEOUT_S = 180


@dataclass(frozen=True)
class RunOptions:
    """How to run. `launcher` replaces the ChildLauncher built from the other options (a
    test's stand-in with the same `run` and `host_env`)."""

    out_path: Path
    python: str = sys.executable
    inductor_cache_dir: Path | None = None
    verbose: bool = False
    stream: TextIO = field(default_factory=lambda: sys.stderr)  # at run time: defused
    launcher: Launcher | None = None
    ahead: bool = True  # ChildLauncher.ahead: each child's successor starts beside it
    child_user: ChildUser | None = None  # ChildLauncher.child_user (the image backend)

    def make_launcher(self) -> Launcher:
        return self.launcher or ChildLauncher(
            python=self.python,
            shared_cache_dir=self.inductor_cache_dir,
            show_output=self.verbose,
            stream=self.stream,
            ahead=self.ahead,
            child_user=self.child_user,
        )


@dataclass
class RunSide:
    """One side of a run: its config (steps already under the policy that applies), the
    launcher its children start from, where its document goes, and what the document
    records beside the measurements (`pairing`: this side's part of a paired run)."""

    config: Config
    launcher: Launcher
    out_path: Path
    label: str = ""
    python: str = sys.executable  # the interpreter the launcher starts, as the user named it
    pairing: Pairing | None = None
    # The document's head (results/document.new_document), its steps as measured so far
    # (one record per step, every selected step from the start) and its run health.
    head: DocumentHead | None = None
    steps: list[StepRecord] = field(default_factory=list)
    health: RunHealth | None = None

    @property
    def document(self) -> dict[str, Any]:
        """The side's result document, as JSON: written from its records, once, each save."""
        if self.head is None:
            return {}
        steps = [record.to_json() for record in self.steps]
        return self.head.to_json(steps, self.pairing, self.health)

    def save(self) -> None:
        write_document(self.document, self.out_path)


def run_config(config: Config, options: RunOptions) -> dict[str, Any]:
    """Measure every step of one side; the result document is rewritten after every child.

    An interruption (RunInterrupted, KeyboardInterrupt) marks the step or variant being
    measured, and every one not reached, as an error, writes the document and propagates
    as RunInterrupted with `result_path` set (unset when nothing was measured yet).
    """
    side = RunSide(config, options.make_launcher(), options.out_path, python=options.python)
    run_sides([side], options.stream)
    return side.document


def run_sides(sides: Sequence[RunSide], stream: TextIO, *, in_process: bool = False) -> None:
    """Measure every step of every side, a step's processes alternating between the sides
    that declare it; each side's `document` is filled in and written after every child.
    Steps run in the order the sides declare them, the first side's first.

    With `in_process` (two sides, one torch) a step's eager references and warm timing
    processes measure both sides in one child (measure_step).

    An interruption marks, on every side, the step being measured and those not reached
    (as run_config says) and propagates with the last side's `result_path`."""
    try:
        _run_sides(sides, stream, in_process)
    finally:  # a child started ahead for a turn that will not come (run/launcher.py)
        for side in sides:
            close_launcher(side.launcher)


def _run_sides(sides: Sequence[RunSide], stream: TextIO, in_process: bool) -> None:
    entries = [
        {step.name: _resolve(side.config, i, step) for i, step in enumerate(side.config.steps)}
        for side in sides
    ]
    try:
        for side in sides:
            _start_document(side)
    except (KeyboardInterrupt, RunInterrupted) as exc:
        raise as_interrupted(exc) from None
    names = list(dict.fromkeys(s.name for side in sides for s in side.config.steps))
    finished: set[str] = set()
    current: str | None = None
    children_local = sides[0].launcher.children_local
    machine = MachineLoad(children_local=children_local)
    machine.start()
    on_gpu = any(s.device == "cuda" for side in sides for s in side.config.steps)
    gpu = GpuSampler(children_local=children_local).start() if on_gpu else None
    try:
        for name in names:
            current = name
            step_sides = []
            for side, side_entries in zip(sides, entries):
                index = _step_index(side.config, name)
                if index is None:
                    continue
                record = StepRecord(side.config.steps[index])
                side.steps[index] = record
                step_sides.append(
                    StepSide(
                        record.config,
                        side_entries[name],
                        side.config.repo_root,
                        side.launcher,
                        record,
                        side.label,
                        side.save,
                    )
                )
            measure_step(step_sides, stream=stream, in_process=in_process)
            finished.add(name)
            for side in sides:
                side.save()
    except (KeyboardInterrupt, RunInterrupted) as exc:
        stop = as_interrupted(exc)
        _record_health(sides, machine, gpu)
        for side in sides:
            _mark_unfinished(side, finished, current, stop, stream)
            side.save()
            stop.result_path = str(side.out_path)
        raise stop from None
    _record_health(sides, machine, gpu)
    for side in sides:
        side.save()


def _record_health(sides: Sequence[RunSide], machine: MachineLoad, gpu: GpuSampler | None) -> None:
    """Each side's `run_health`: the machine's load over the whole run (one machine, both
    sides), the GPU's state where the steps ran on one (run/gpu_state.py), and what the
    side's own measurements show of it (results/run_health.py)."""
    machine.stop()
    load = machine.summary()
    gpu_summary = None
    if gpu is not None:
        gpu.stop()
        gpu_summary = gpu.summary()
    for side in sides:
        health = run_health(load, [record.as_step() for record in side.steps], gpu_summary)
        side.health = health
        if health.unsteady:  # the health line and the decision say one thing
            for record in side.steps:
                if record.recommendation:
                    record.with_recommendation(withheld(record.recommendation))


def _start_document(side: RunSide) -> None:
    """The side's document from its interpreter's environment, every step in it as not
    reached, written before anything is measured."""
    config = side.config
    probe = probe_environment(side.launcher, side.python)
    # The hardware class as this process reads it, not the measuring interpreter's word
    # (run/machine_reading.py): it picks the baseline and what is judged.
    environment = replace(
        part_of(Environment, reading_for(side.launcher).applied(probe)),
        commit=head_commit(config.repo_root),
        inductor_cache="shared" if side.launcher.shared_cache_dir else "fresh",
        measurement_env=MappingProxyType(measurement_variables(side.launcher.host_env)),
    )
    declared = config.declared_steps or tuple(step.name for step in config.steps)
    side.head = new_document(
        environment, str(config.path), config.sha256, declared, config.accept_label
    )
    # Every selected step is in the document from the start, as not reached: a run killed
    # where no handler runs (SIGKILL, the OOM killer, a cancelled job) leaves them as errors,
    # never as steps missing from the result (which would read as "left out with --step").
    ended = ChildFailure(NotRun(RUN_ENDED)).recorded()
    side.steps = [not_run(step, *ended) for step in config.steps]
    side.save()


def _step_index(config: Config, name: str) -> int | None:
    return next((i for i, step in enumerate(config.steps) if step.name == name), None)


def _mark_unfinished(
    side: RunSide, finished: set[str], current: str | None, stop: RunInterrupted, stream: TextIO
) -> None:
    for index, step in enumerate(side.config.steps):
        if step.name in finished:
            continue
        record = side.steps[index]
        if step.name == current:
            _mark_interrupted(record, stop)
            tag = f"[{step.name} · {side.label}]" if side.label else f"[{step.name}]"
            stream.write(f"{tag} {stopped_words(stop.signal_name)}\n")
        else:
            record.mark_not_run(*_not_run(stop))


def _resolve(config: Config, index: int, step: StepConfig) -> EntryPoint:
    return resolve_entry(step.entry, config.repo_root, f"{config.path}: steps[{index}].entry")


def probe_environment(launcher: Launcher, python: str) -> dict[str, Any]:
    """Start the measuring interpreter once: it must import torch; report what it has."""
    outcome = launcher.run(ChildSpec(kind="probe"), label="probe", timeout_s=PROBE_TIMEOUT_S)
    report = outcome.report
    if report is None or report.status != "ok" or report.environment is None:
        reported = report.error if report is not None else None
        failure = outcome.failure
        said = failure_text(failure) if failure is not None else None
        detail = reported or last_line(outcome) or said or "unknown failure"
        raise UsageError(f"--python {python}: cannot use this interpreter: {detail}")
    return report.environment


def _mark_interrupted(record: StepRecord, stop: RunInterrupted) -> None:
    """What was measured stays; the step or variant being measured is `interrupted`, the
    ones after it were not run."""
    interrupted = ChildFailure(Interrupted(stop.signal_name))
    if record.eager is None:
        record.mark_not_run(*_not_run(stop))
        record.fail(*interrupted.at(FailureStage.EAGER).recorded())
        return
    done = len(record.variants)
    for index, variant in enumerate(record.config.variants[done:]):
        why = interrupted.recorded() if index == 0 else _not_run(stop)
        record.variants.append(failed_variant(variant, *why))
    finish_record(record, io.StringIO())


def _not_run(stop: RunInterrupted) -> tuple[str, FailureRecord]:
    return ChildFailure(NotRun(RUN_INTERRUPTED, stop.signal_name)).recorded()
