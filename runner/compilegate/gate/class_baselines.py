"""Stored baselines per hardware class: which file a run of one class reads and writes.

A runner pool's nodes differ (results/machine.py), and a baseline judges a result in full
only when both were measured on one hardware class. Each class's baseline is a file of its
own beside the one named (the config's `baseline:`, or `--baseline`):

    .compilegate/baseline.json                       the named file, as today
    .compilegate/baseline.cuda-nvidia-h200-x1.json   the H200 class's
    .compilegate/baseline.cpu-amd-epyc-2-cores.json  a 2-core AMD EPYC runner's

- Reading (`compare`, `run --baseline`, `matrix --baseline`): a result of class C is
  judged against C's file when it exists, else against the named file — which holds C
  (a repository with one class never gets a second file) or another class (then the gate
  judges only what hardware does not move: gate/compare.py, gate/hardware_reach.py).
- Writing (`baseline update`): a result of class C goes into C's file when that exists or
  when the named file holds another class; else into the named file (the first baseline,
  or the class it holds already). So the first class recorded stays in the named file.
- History (gate/history.py) rides in each step of a baseline, so each class's file keeps
  its own runs: the default branch's history of one node type never judges another's.
"""

from __future__ import annotations

from pathlib import Path

from ..results.machine import HardwareClass, MachineFingerprint
from ..results.model import ResultDocument
from .documents import read_document
from .policy import environment_mismatch


def class_baseline_name(name: str, machine: HardwareClass) -> str:
    """`baseline.json` → `baseline.cuda-nvidia-h200-x1.json`."""
    path = Path(name)
    return f"{path.stem}.{machine.key}{path.suffix}" if path.suffix else f"{name}.{machine.key}"


def class_baseline_path(named: Path, machine: HardwareClass) -> Path:
    """The file a class's baseline is kept in, beside the named baseline."""
    return named.with_name(class_baseline_name(named.name, machine))


def hardware_class_of(document: ResultDocument) -> HardwareClass:
    return MachineFingerprint.of(document).hardware_class


def baseline_to_read(named: Path, result: ResultDocument) -> Path:
    """The baseline `result` is judged against: its class's file when there is one, else
    the named file."""
    own = class_baseline_path(named, hardware_class_of(result))
    return own if own.is_file() else named


def baseline_to_update(named: Path, result: ResultDocument) -> Path:
    """The file `baseline update` merges `result` into (the module's docstring)."""
    own = class_baseline_path(named, hardware_class_of(result))
    if own.is_file() or not named.exists():
        return own if own.is_file() else named
    held = read_document(named, role="baseline")
    if environment_mismatch(held.environment, result.environment) is not None:
        return own
    return named


def class_baseline(
    named: Path, held: ResultDocument, result: ResultDocument
) -> tuple[ResultDocument, Path]:
    """The baseline `result` is judged against, and its file: `held` (read from `named`
    before anything was measured) unless `result`'s class has its own file beside it."""
    own = baseline_to_read(named, result)
    if own == named:
        return held, named
    return read_document(own, role="baseline"), own
