"""Drive a whole run: for each step, the eager reference then each variant, each in a child.

Data flows one way: Config → (entries resolved) → child processes → result document,
written after every child so nothing already measured is lost.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..child.protocol import EntryPoint
from ..config import Config, StepConfig
from ..errors import UsageError
from ..results.document import (
    add_process,
    eager_entry,
    finish_step,
    new_document,
    process_summary,
    step_skeleton,
    variant_entry,
    variant_skeleton,
    write_document,
)
from .entry_check import resolve_entry
from .launcher import ChildLauncher, ChildOutcome

PROBE_TIMEOUT_S = 180


@dataclass(frozen=True)
class RunOptions:
    out_path: Path
    python: str = sys.executable
    inductor_cache_dir: Path | None = None
    verbose: bool = False
    stream: TextIO = sys.stderr


def run_config(config: Config, options: RunOptions) -> dict[str, Any]:
    entries = {step.name: _resolve(config, i, step) for i, step in enumerate(config.steps)}
    launcher = ChildLauncher(
        python=options.python,
        shared_cache_dir=options.inductor_cache_dir,
        show_output=options.verbose,
        stream=options.stream,
    )
    environment = probe_environment(launcher, options.python)
    environment["commit"] = git_commit(config.repo_root)
    environment["inductor_cache"] = "shared" if options.inductor_cache_dir else "fresh"
    document = new_document(environment, str(config.path), config.sha256)
    write_document(document, options.out_path)
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
        write_document(document, options.out_path)
    return document


def _resolve(config: Config, index: int, step: StepConfig) -> EntryPoint:
    return resolve_entry(step.entry, config.repo_root, f"{config.path}: steps[{index}].entry")


def probe_environment(launcher: ChildLauncher, python: str) -> dict[str, Any]:
    """Start the measuring interpreter once: it must import torch; report what it has."""
    outcome = launcher.run({"kind": "probe"}, label="probe", timeout_s=PROBE_TIMEOUT_S)
    if outcome.document is None or outcome.document.get("status") != "ok":
        detail = _last_line(outcome) or outcome.error or "unknown failure"
        raise UsageError(f"--python {python}: cannot use this interpreter: {detail}")
    return outcome.document["environment"]


def measure_step(
    step: StepConfig,
    entry: EntryPoint,
    repo_root: Path,
    launcher: ChildLauncher,
    step_doc: dict[str, Any],
    *,
    save: Any,
    stream: TextIO,
) -> None:
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
        outcome = launcher.run(
            {**base_spec, "kind": "eager"},
            label=f"{step.name}/eager#{number}",
            timeout_s=step.timeout_s,
        )
        error = _outcome_error(outcome)
        if error is not None:
            break
        eager_docs.append(outcome.document)
    if error is not None:
        step_doc.update(status="error", error=f"eager: {error}")
        for variant in step.variants:
            skipped = variant_skeleton(variant)
            skipped.update(status="error", error="not run: the step failed eagerly")
            step_doc["variants"].append(skipped)
        stream.write(f"[{step.name}] error: {step_doc['error']}\n")
        return
    step_doc["device"] = eager_docs[0]["device"]
    step_doc["eager"] = eager_entry(eager_docs[0]["eager"])
    for other in eager_docs[1:]:
        step_doc["eager"]["processes"].append(process_summary(eager_entry(other["eager"])))
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
            entry, error = _measure_variant(step, variant, spec, launcher, cache_dir, stream)
        if error is None:
            assert entry is not None
            step_doc["variants"].append(entry)
        else:
            failed = variant_skeleton(variant)
            failed.update(status="error", error=error)
            step_doc["variants"].append(failed)
            stream.write(f"[{step.name}] variant {variant.id} error: {error}\n")
        save()
    finish_step(step_doc)


def _measure_variant(
    step: StepConfig,
    variant: Any,
    spec: dict[str, Any],
    launcher: ChildLauncher,
    cache_dir: Path | None,
    stream: TextIO,
) -> tuple[dict[str, Any] | None, str | None]:
    """The variant's first process (cold compile, diagnostics, numerics), then its
    timing-only processes, which reuse the Inductor cache the first one compiled into: each
    adds a process record, and their spread is the run-to-run noise of the variant's speed.
    A later process that fails fails the variant: a compiled step that crashes or hangs
    now and then is an error, not a smaller sample."""
    label = f"{step.name}/{variant.id}"
    outcome = launcher.run(spec, label=label, timeout_s=step.timeout_s, cache_dir=cache_dir)
    error = _outcome_error(outcome)
    if error is not None:
        return None, error
    assert outcome.document is not None
    entry = variant_entry(variant, outcome.document)
    total = step.variant_processes
    for number in range(2, total + 1):
        stream.write(f"[{step.name}] variant {variant.id}: timing process {number}/{total}\n")
        outcome = launcher.run(
            {**spec, "timing_only": True},
            label=f"{label}#{number}",
            timeout_s=step.timeout_s,
            cache_dir=cache_dir,
        )
        error = _outcome_error(outcome)
        if error is not None:
            return None, f"timing process {number}/{total}: {error}"
        assert outcome.document is not None
        add_process(entry, outcome.document["variant"])
    return entry, None


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
        return str(outcome.document.get("error"))
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
