"""Import the user's step factory and turn what it returns into StepParts (child side).

The parent checked the entry statically before anything ran (run/entry_check.py); here the
child imports user code for real. Standard library only: this runs under the interpreter
being measured.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..paths import is_inside
from .protocol import EntryPoint

REQUIRED_PARTS = ("model", "optimizer", "batch", "loss")


class StepDefinitionError(Exception):
    """The factory raised, or returned something that is not a usable training step."""


@dataclass
class StepParts:
    """What a factory returns: the pieces of one training step (compilegate owns the loop)."""

    model: Any
    optimizer: Any
    batch: Callable[[int], Any]
    loss: Callable[[Any, Any], Any]
    scheduler: Any = None


def load_factory(entry: EntryPoint, repo_root: Path, side: str = "") -> Callable[..., Any]:
    """Import the factory (child process only). Import errors become StepDefinitionError.
    `side` names the entry file's module apart from another side's in the same process
    (compilegate_user_base_step, compilegate_user_head_step)."""
    add_import_paths(user_import_paths(entry, repo_root), sys.path)
    try:
        if entry.module is not None:
            module = importlib.import_module(entry.module)
        else:
            name = "compilegate_user_" + (f"{side}_" if side else "") + Path(entry.file).stem
            spec = importlib.util.spec_from_file_location(name, entry.file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    except BaseException as exc:  # user code may raise anything, SystemExit included
        raise StepDefinitionError(
            f"importing {entry.spec} raised {describe_user_exception(exc, repo_root)}"
        ) from None
    factory: object = getattr(module, entry.function, None)
    if not callable(factory):
        raise StepDefinitionError(f"{entry.spec}: {entry.function!r} is not callable")
    return factory


def user_import_paths(entry: EntryPoint, repo_root: Path) -> list[str]:
    """Like `python path/file.py`: the file's folder (sibling modules), the repository root
    (the user's packages), and `src/` when the entry lies there (a src layout, which the
    parent's entry check accepts)."""
    root = repo_root.resolve()
    file = Path(entry.file).resolve()
    folders = [file.parent, root]
    if is_inside(file, root / "src"):
        folders.append(root / "src")
    unique: list[str] = []
    for folder in map(str, folders):
        if folder not in unique:
            unique.append(folder)
    return unique


def add_import_paths(folders: list[str], path: list[str]) -> None:
    """Put `folders` on `path` (sys.path) after the standard library's own entries: a
    repository file named like a standard-library module (json.py, random.py) must not
    replace it for the harness or for torch, which import lazily; user code still comes
    before site-packages."""
    position = stdlib_entries_end(path)
    for folder in reversed(folders):
        if folder not in path:
            path.insert(position, folder)


def stdlib_entries_end(path: list[str]) -> int:
    """The index just past the interpreter's standard-library entries of `path` (its zip,
    its folder, lib-dynload); where site-packages starts when those are not recognised."""
    stdlib = {
        os.path.normcase(os.path.realpath(folder))
        for folder in (sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib"))
        if folder
    }
    end = None
    for index, entry in enumerate(path):
        if not entry:
            continue
        real = os.path.normcase(os.path.realpath(entry))
        in_stdlib = real in stdlib or (
            os.path.basename(real) == "lib-dynload" and os.path.dirname(real) in stdlib
        )
        if in_stdlib or (entry.endswith(".zip") and os.path.basename(entry).startswith("python")):
            end = index + 1
    if end is not None:
        return end
    return next(
        (i for i, entry in enumerate(path) if entry.endswith(("site-packages", "dist-packages"))),
        0,
    )


def build_parts(
    factory: Callable[..., Any], device: str, entry: EntryPoint, repo_root: Path
) -> StepParts:
    """Call `factory(device=...)` and check it returned model, optimizer, batch and loss."""
    try:
        made = factory(device=device)
    except BaseException as exc:
        raise StepDefinitionError(
            f"factory {entry.spec} raised {describe_user_exception(exc, repo_root)}"
        ) from None

    def get(key: str) -> Any:
        return made.get(key) if isinstance(made, dict) else getattr(made, key, None)

    missing = [key for key in REQUIRED_PARTS if get(key) is None]
    if missing:
        kind = "dict" if isinstance(made, dict) else type(made).__name__
        has = sorted(made) if isinstance(made, dict) else []
        raise StepDefinitionError(
            f"factory {entry.spec} returned a {kind} without {', '.join(map(repr, missing))} "
            f"(needs {', '.join(REQUIRED_PARTS)}; has {', '.join(map(str, has)) or 'none'})"
        )
    for key in ("batch", "loss"):
        if not callable(get(key)):
            raise StepDefinitionError(f"factory {entry.spec}: {key!r} must be a function")
    if not hasattr(get("optimizer"), "step") or not hasattr(get("model"), "parameters"):
        raise StepDefinitionError(
            f"factory {entry.spec}: 'model' must be an nn.Module and 'optimizer' an optimizer"
        )
    return StepParts(get("model"), get("optimizer"), get("batch"), get("loss"), get("scheduler"))


def describe_user_exception(exc: BaseException, repo_root: Path) -> str:
    """`ValueError: msg (at examples/step.py:12)`: the innermost frame inside the repo."""
    location = ""
    root = repo_root.resolve()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = Path(frame.filename)
        if path.is_absolute() and is_inside(path.resolve(), root):
            location = f" (at {path.resolve().relative_to(root)}:{frame.lineno})"
            break
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + message if message else ''}{location}"
