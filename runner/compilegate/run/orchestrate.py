"""Drive a whole run: for each step, the eager reference then each variant, each in a child.

Data flows one way: Config → (entries resolved) → child processes → result document,
written after every child so nothing already measured is lost.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..child.protocol import EntryPoint
from ..config import Config, StepConfig
from ..errors import UsageError
from ..results.document import (
    eager_entry,
    finish_step,
    new_document,
    process_summary,
    step_skeleton,
    variant_entry,
    variant_skeleton,
    write_document,
)
from .child_env import measurement_variables
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
    environment["measurement_env"] = measurement_variables(launcher.host_env)
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
            env_opt_in=step.env,
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
        outcome = launcher.run(
            spec,
            label=f"{step.name}/{variant.id}",
            timeout_s=step.timeout_s,
            env_opt_in=step.env,
        )
        error = _outcome_error(outcome)
        if error is None:
            assert outcome.document is not None
            step_doc["variants"].append(variant_entry(variant, outcome.document))
        else:
            failed = variant_skeleton(variant)
            failed.update(status="error", error=error)
            step_doc["variants"].append(failed)
            stream.write(f"[{step.name}] variant {variant.id} error: {error}\n")
        save()
    finish_step(step_doc)


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
