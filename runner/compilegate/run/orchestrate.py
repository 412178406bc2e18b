"""Drive a whole run: for each step, the eager reference then each variant, each in a child.

Data flows one way: Config → (entries resolved) → child processes → result document,
written after every child so nothing already measured is lost.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from ..child.protocol import EntryPoint
from ..config import Config, StepConfig
from ..errors import RunInterrupted, UsageError
from ..results.compile_cost import FRESH, REUSED, SHARED
from ..results.document import (
    add_process,
    eager_entry,
    finish_step,
    new_document,
    non_finite_error,
    process_summary,
    step_skeleton,
    variant_entry,
    variant_skeleton,
    write_document,
)
from .child_env import measurement_variables
from .entry_check import resolve_entry
from .interrupts import as_interrupted
from .launcher import ChildLauncher, ChildOutcome

PROBE_TIMEOUT_S = 180


@dataclass(frozen=True)
class RunOptions:
    """How to run. `launcher` replaces the ChildLauncher built from the other options (a
    test's stand-in with the same `run` and `host_env`)."""

    out_path: Path
    python: str = sys.executable
    inductor_cache_dir: Path | None = None
    verbose: bool = False
    stream: TextIO = sys.stderr
    launcher: ChildLauncher | None = None


def run_config(config: Config, options: RunOptions) -> dict[str, Any]:
    """Measure every step; the result document is rewritten after every child.

    An interruption (RunInterrupted, KeyboardInterrupt) marks the step or variant being
    measured, and every one not reached, as an error, writes the document and propagates
    as RunInterrupted with `result_path` set (unset when nothing was measured yet).
    """
    entries = {step.name: _resolve(config, i, step) for i, step in enumerate(config.steps)}
    launcher = options.launcher or ChildLauncher(
        python=options.python,
        shared_cache_dir=options.inductor_cache_dir,
        show_output=options.verbose,
        stream=options.stream,
    )
    try:
        environment = probe_environment(launcher, options.python)
    except (KeyboardInterrupt, RunInterrupted) as exc:
        raise as_interrupted(exc) from None
    environment["commit"] = git_commit(config.repo_root)
    environment["inductor_cache"] = "shared" if options.inductor_cache_dir else "fresh"
    declared = config.declared_steps or tuple(step.name for step in config.steps)
    environment["measurement_env"] = measurement_variables(launcher.host_env)
    document = new_document(environment, str(config.path), config.sha256, declared)
    write_document(document, options.out_path)
    completed = 0
    try:
        for step in config.steps:
            step_doc = step_skeleton(step)
            document["steps"].append(step_doc)
            measure_step(
                step,
                entries[step.name],
                config.repo_root,
                launcher,
                step_doc,
                save=lambda: write_document(document, options.out_path),
                stream=options.stream,
            )
            completed += 1
            write_document(document, options.out_path)
    except (KeyboardInterrupt, RunInterrupted) as exc:
        stop = as_interrupted(exc)
        if len(document["steps"]) > completed:
            _mark_interrupted(config.steps[completed], document["steps"][completed], stop)
            options.stream.write(f"[{config.steps[completed].name}] {_stopped(stop)}\n")
        for step in config.steps[len(document["steps"]) :]:
            step_doc = step_skeleton(step)
            _mark_not_run(step, step_doc, f"not run: the run was {_stopped(stop)}")
            document["steps"].append(step_doc)
        write_document(document, options.out_path)
        stop.result_path = str(options.out_path)
        raise stop from None
    return document


def _resolve(config: Config, index: int, step: StepConfig) -> EntryPoint:
    return resolve_entry(step.entry, config.repo_root, f"{config.path}: steps[{index}].entry")


def probe_environment(launcher: ChildLauncher, python: str) -> dict[str, Any]:
    """Start the measuring interpreter once: it must import torch; report what it has."""
    outcome = launcher.run({"kind": "probe"}, label="probe", timeout_s=PROBE_TIMEOUT_S)
    if outcome.document is None or outcome.document.get("status") != "ok":
        reported = (outcome.document or {}).get("error")
        detail = reported or _last_line(outcome) or outcome.error or "unknown failure"
        raise UsageError(f"--python {python}: cannot use this interpreter: {detail}")
    return outcome.document["environment"]


def measure_step(
    step: StepConfig,
    entry: EntryPoint,
    repo_root: Path,
    launcher: ChildLauncher,
    step_doc: dict[str, Any],
    *,
    save: Callable[[], None],
    stream: TextIO,
) -> None:
    """Eager references, then each variant, each in its own child, into `step_doc`.

    A failure of one child, or of the parent while recording what it returned, becomes that
    step's or variant's error; the others still run. An interruption propagates (the
    launcher has killed the child): run_config marks what it cut short.
    """
    settings = step.measurement_settings()
    base_spec = {
        "repo_root": str(repo_root),
        "entry": entry.to_dict(),
        "step": step.name,
        "device": step.device,
        "settings": settings,
    }
    eager_docs = []
    error = None
    for number in range(1, step.eager_processes + 1):
        stream.write(f"[{step.name}] eager reference {number}/{step.eager_processes}\n")
        document, error = _run_child(
            launcher, {**base_spec, "kind": "eager"}, step, f"{step.name}/eager#{number}"
        )
        if error is not None:
            break
        eager_docs.append(document)
    for raw in eager_docs:  # checked before the statistics, which a NaN sample would crash
        error = error or non_finite_error(raw["eager"], "eager.")
    if error is None:
        _, error = _record(_record_eager, step_doc, eager_docs)
    if error is None:
        error = non_finite_error(step_doc["eager"], "eager.")
    if error is not None:
        step_doc["eager"] = None  # whatever was recorded may hold the NaN
        _mark_not_run(step, step_doc, "not run: the step failed eagerly")
        step_doc["error"] = f"eager: {error}"
        stream.write(f"[{step.name}] error: {step_doc['error']}\n")
        return
    save()
    for variant in step.variants:
        stream.write(f"[{step.name}] variant {variant.id}\n")
        spec = {
            **base_spec,
            "kind": "variant",
            "device": step_doc["device"],
            "variant": {
                "id": variant.id,
                "compile_kwargs": variant.compile_kwargs(),
                "compile_target": variant.compile_target,
            },
        }
        with _variant_cache(launcher) as cache_dir:
            entry_doc, error = _measure_variant(step, variant, spec, launcher, cache_dir, stream)
        if error is not None:
            entry_doc = variant_skeleton(variant)
            entry_doc.update(status="error", error=error)
            stream.write(f"[{step.name}] variant {variant.id} error: {error}\n")
        step_doc["variants"].append(entry_doc)
        save()
    _finish(step_doc, stream)


def _run_child(
    launcher: ChildLauncher,
    spec: dict[str, Any],
    step: StepConfig,
    label: str,
    *,
    cache_dir: Path | None = None,
) -> tuple[dict[str, Any] | None, str | None]:
    """One child's document, or the one-line error it ended with."""
    try:
        outcome = launcher.run(
            spec, label=label, timeout_s=step.timeout_s, env_opt_in=step.env, cache_dir=cache_dir
        )
    except Exception as exc:  # the parent's own failure to run it: this child's error only
        return None, f"compilegate could not run this child: {_one_line(exc)}"
    error = _outcome_error(outcome)
    return (outcome.document if error is None else None), error


def _record(record: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """The parent-side recording of a child's document: its value, or its exception as the
    one-line error of that step or variant (never the end of the whole run)."""
    try:
        return record(*args), None
    except Exception as exc:
        return None, f"compilegate could not record this measurement: {_one_line(exc)}"


def _record_eager(step_doc: dict[str, Any], eager_docs: list[dict[str, Any]]) -> None:
    eager = eager_entry(eager_docs[0]["eager"])
    for other in eager_docs[1:]:
        eager["processes"].append(process_summary(eager_entry(other["eager"])))
    step_doc["device"] = eager_docs[0]["device"]
    step_doc["eager"] = eager


def _finish(step_doc: dict[str, Any], stream: TextIO) -> None:
    _, error = _record(finish_step, step_doc)
    if error is not None:
        step_doc.update(status="error", error=f"summary: {error}")
        stream.write(f"[{step_doc['name']}] error: {step_doc['error']}\n")


def _mark_not_run(step: StepConfig, step_doc: dict[str, Any], reason: str) -> None:
    """The step failed or was never reached: it and every variant are errors."""
    step_doc.update(status="error", error=reason)
    step_doc["variants"] = []
    for variant in step.variants:
        skipped = variant_skeleton(variant)
        skipped.update(status="error", error=reason)
        step_doc["variants"].append(skipped)


def _mark_interrupted(step: StepConfig, step_doc: dict[str, Any], stop: RunInterrupted) -> None:
    """What was measured stays; the step or variant being measured is `interrupted`, the
    ones after it were not run."""
    if step_doc.get("eager") is None:
        _mark_not_run(step, step_doc, f"not run: the run was {_stopped(stop)}")
        step_doc["error"] = f"eager: {_stopped(stop)}"
        return
    done = len(step_doc["variants"])
    for index, variant in enumerate(step.variants[done:]):
        cut = variant_skeleton(variant)
        cut.update(
            status="error",
            error=_stopped(stop) if index == 0 else f"not run: the run was {_stopped(stop)}",
        )
        step_doc["variants"].append(cut)
    _finish(step_doc, io.StringIO())


def _stopped(stop: RunInterrupted) -> str:
    return f"interrupted ({stop.signal_name})"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _measure_variant(
    step: StepConfig,
    variant: Any,
    spec: dict[str, Any],
    launcher: ChildLauncher,
    cache_dir: Path | None,
    stream: TextIO,
) -> tuple[dict[str, Any] | None, str | None]:
    """The variant's first process (cold compile, diagnostics, numerics), then its
    timing-only processes, which reuse the Inductor cache the first one compiled into (the
    first `cold_compiles` of them compile cold, each in a fresh cache, for the compile's
    noise): each adds a process record, and their spread is the run-to-run noise of the
    variant's speed.
    A later process that fails fails the variant: a compiled step that crashes or hangs
    now and then is an error, not a smaller sample. A measurement that is not a finite
    number is that variant's error, found before the statistics (which it would crash)."""
    label = f"{step.name}/{variant.id}"
    first_cache, later_cache = (FRESH, REUSED) if cache_dir is not None else (SHARED, SHARED)
    document, error = _run_child(launcher, spec, step, label, cache_dir=cache_dir)
    if error is None:
        error = non_finite_error(document["variant"])
    if error is None:
        entry, error = _record(variant_entry, variant, document, first_cache)
    if error is not None:
        return None, error
    total = step.variant_processes
    for number in range(2, total + 1):
        cold = number <= step.cold_compiles and cache_dir is not None
        how = "cold compile, " if cold else ""
        stream.write(f"[{step.name}] variant {variant.id}: {how}timing process {number}/{total}\n")
        timing_spec = {**spec, "timing_only": True}
        with _variant_cache(launcher) if cold else contextlib.nullcontext(cache_dir) as own:
            document, error = _run_child(
                launcher, timing_spec, step, f"{label}#{number}", cache_dir=own
            )
        if error is None:
            error = non_finite_error(document["variant"])
        if error is None:
            cache = FRESH if cold else later_cache
            _, error = _record(add_process, entry, document["variant"], cache)
        if error is not None:
            return None, f"timing process {number}/{total}: {error}"
    error = non_finite_error(entry)
    return (None, error) if error is not None else (entry, None)


@contextlib.contextmanager
def _variant_cache(launcher: ChildLauncher) -> Iterator[Path | None]:
    """An Inductor cache for one variant's processes: empty for its first (a cold compile),
    kept for the others. None when the run shares one cache (--inductor-cache)."""
    if launcher.shared_cache_dir is not None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="compilegate-cache-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _outcome_error(outcome: ChildOutcome) -> str | None:
    if outcome.error is not None:
        last = _last_line(outcome)
        return outcome.error + (f" (last output: {last})" if last else "")
    assert outcome.document is not None
    if outcome.document.get("status") != "ok":
        return " ".join(str(outcome.document.get("error")).split())
    return None


def _last_line(outcome: ChildOutcome) -> str:
    for line in reversed(outcome.output_tail):
        if line.strip():
            return line.strip()[:300]
    return ""


def git_commit(repo_root: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=repo_root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
