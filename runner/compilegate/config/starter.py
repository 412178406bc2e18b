"""The starting compilegate.yml that `compilegate init` writes: one step, the device and
threads chosen for the machine the measuring interpreter runs on, a comment above every key.

Only text is made here (the CLI probes the machine and writes the file); the text is valid
against schemas/config.schema.json and loads with config/loading.py
(tests/unit/config/test_init.py).
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

COMMENT_WIDTH = 96
# What `threads: 1` is chosen for, measured on this project's 2-core runner, idle: the A/A
# noise of one step (two identical copies timed alternately in one process) with torch's
# default threads (one per core) against one thread.
AA_NOISE_DEFAULT_THREADS_PCT = "±93–2732 %"
AA_NOISE_ONE_THREAD_PCT = "±2.8 %"
_NAME_PATTERN = re.compile(r"[^A-Za-z0-9_.-]+")
_PLAIN_ENTRY = re.compile(r"[A-Za-z0-9_./-]+:[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Machine:
    """What the measuring interpreter reported (child/environment.py's keys)."""

    device: str  # cpu or cuda
    torch_version: str
    cpu_count: int | None = None
    gpu_name: str | None = None
    # The device torch saw, when `device` was given instead (`compilegate init --device`).
    seen_device: str | None = None

    @classmethod
    def from_environment(cls, environment: Mapping[str, Any], device: str | None = None) -> Machine:
        """`device` overrides what torch saw (`compilegate init --device`)."""
        seen = environment.get("device") or "cpu"
        return cls(
            device=device or seen,
            torch_version=str(environment.get("torch") or "unknown"),
            cpu_count=environment.get("cpu_count"),
            gpu_name=environment.get("gpu_name"),
            seen_device=seen if device else None,
        )

    def described(self) -> str:
        if self.device == "cuda":
            return f"torch {self.torch_version}, GPU {self.gpu_name or '(unnamed)'}"
        cores = f", {self.cpu_count} cores" if self.cpu_count else ""
        return f"torch {self.torch_version}, CPU{cores}"


def step_name_for(entry: str) -> str:
    """A step name from the entry: the file's stem (`train/step.py:make_step` → `step`) or
    the module's last part; `step` when nothing usable is left."""
    target = entry.rpartition(":")[0]
    if target.endswith(".py") or "/" in target:
        stem = PurePosixPath(target.replace("\\", "/")).stem
    else:
        stem = target.rpartition(".")[2]
    name = _NAME_PATTERN.sub("-", stem).lstrip("_.-")[:100]
    return name or "step"


def schema_reference(schema_file: Path, config_dir: Path, environment: Path) -> str:
    """What the `$schema=` line of a config written in `config_dir` says, so that it works
    in every clone of the repository: the schema's path relative to that folder when the
    schema is part of the repository (a source checkout of compilegate inside it), else the
    schema's published address, its `$id` (an installed copy lives in a virtual
    environment, `environment`, which no clone has at the same place; an absolute path
    names one machine)."""
    schema = schema_file.resolve()
    folder = config_dir.resolve()
    inside_repo = schema.is_relative_to(folder)
    installed = schema.is_relative_to(environment.resolve())
    if inside_repo and not installed:
        return PurePosixPath(*Path(os.path.relpath(schema, folder)).parts).as_posix()
    published = json.loads(schema_file.read_text(encoding="utf-8")).get("$id")
    if not isinstance(published, str) or not published.startswith("https://"):
        raise ValueError(f"{schema_file}: no https $id to point a config at")
    return published


def starter_config_text(
    entry: str, machine: Machine, *, name: str, schema_path: str, version: str
) -> str:
    """The YAML `compilegate init` writes, each key under a comment saying what it is and
    why it has this value."""
    cuda = machine.device == "cuda"
    lines = [
        f"# yaml-language-server: $schema={schema_path}",
        *_comment(
            f"Written by `compilegate init` (compilegate {version}) for {machine.described()}. "
            "docs/reference/config.md lists every key; unknown keys are errors. The "
            "$schema line above gives an editor the schema for completion: a path relative "
            "to this file, or the schema's published address."
        ),
        "",
        *_comment("The config format; 1 is the only one."),
        "version: 1",
        *_comment("The training steps to measure, each eagerly and compiled, in child processes."),
        "steps:",
    ]
    step: list[tuple[str, str]] = [
        (
            f"name: {name}",
            "The step's name: reports, the baseline and `compilegate run --step` know it by it.",
        ),
        (
            f"entry: {_quoted(entry)}",
            "The factory that returns the step's model, optimizer, batch(i) and loss, as "
            "path/to/file.py:function or package.module:function inside this repository.",
        ),
        (f"device: {machine.device}", _device_comment(machine)),
        (
            "variants:\n  - {mode: default}" + ("\n  - {mode: reduce-overhead}" if cuda else ""),
            "The compiled configurations each timed against eager: torch.compile(model) in "
            + (
                "its default mode, and in reduce-overhead (CUDA graphs: fewer kernel launches, "
                "which pays off for small, launch-bound steps)."
                if cuda
                else "its default mode (reduce-overhead's CUDA graphs need a GPU). Add "
                "{mode: default, dynamic: true} when batch shapes change between steps."
            ),
        ),
    ]
    if not cuda:
        step.append(
            (
                "threads: 1",
                "torch.set_num_threads for the step. One thread gives steady numbers on a CPU: "
                "on a 2-core runner, idle, two identical copies of a step disagreed by "
                f"{AA_NOISE_DEFAULT_THREADS_PCT} with torch's default threads (one per core) "
                f"and by {AA_NOISE_ONE_THREAD_PCT} with one. Remove it to time your training's "
                "own thread count, at the cost of that noise.",
            )
        )
    for index, (setting, comment) in enumerate(step):
        lead = "  - " if index == 0 else "    "
        lines.extend(_comment(comment, indent="    "))
        first, *rest = setting.split("\n")
        lines.append(lead + first)
        lines.extend("    " + line for line in rest)
    return "\n".join(lines) + "\n"


def _device_comment(machine: Machine) -> str:
    if machine.seen_device is not None:
        seen = (
            f"a GPU ({machine.gpu_name or 'unnamed'})"
            if machine.seen_device == "cuda"
            else "no GPU"
        )
        return (
            f"Where the step runs: {machine.device}, as `compilegate init --device` was told "
            f"(torch {machine.torch_version} sees {seen} on the machine init ran on). auto "
            "takes cuda when there is one."
        )
    if machine.device == "cuda":
        return (
            f"Where the step runs: cuda, because torch {machine.torch_version} sees a GPU "
            f"({machine.gpu_name or 'unnamed'}). cpu times it on the host; auto takes cuda "
            "when there is one."
        )
    return (
        f"Where the step runs: cpu, because torch {machine.torch_version} sees no GPU here. "
        "cuda on a GPU machine; auto takes cuda when there is one."
    )


def _comment(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        width=COMMENT_WIDTH,
        initial_indent=f"{indent}# ",
        subsequent_indent=f"{indent}# ",
        break_on_hyphens=False,
    )


def _quoted(entry: str) -> str:
    """The entry as it is when plain, else a YAML double-quoted scalar (JSON's escaping is
    YAML's): a path may hold `#`, `: ` or a leading `-`."""
    if _PLAIN_ENTRY.fullmatch(entry) and not entry.startswith("-"):
        return entry
    return json.dumps(entry, ensure_ascii=False)
