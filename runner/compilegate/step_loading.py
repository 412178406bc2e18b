"""Find a declared step factory inside the repository and turn its output into StepParts.

`resolve_entry` runs in the parent before anything is measured: it checks, without
importing user code, that the file or module exists inside the repository and defines
the function. `load_factory` and `build_parts` run in the child, which imports user code.
This module must stay free of third-party imports (it runs under the child's interpreter).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .errors import ConfigError

REQUIRED_PARTS = ("model", "optimizer", "batch", "loss")


class StepDefinitionError(Exception):
    """The factory raised, or returned something that is not a usable training step."""


@dataclass(frozen=True)
class EntryPoint:
    """A resolved `path/file.py:function` or `package.module:function`."""

    spec: str
    file: str
    function: str
    line: int
    module: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "file": self.file,
            "function": self.function,
            "line": self.line,
            "module": self.module,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EntryPoint:
        return cls(raw["spec"], raw["file"], raw["function"], raw["line"], raw.get("module"))


@dataclass
class StepParts:
    """What a factory returns: the pieces of one training step (compilegate owns the loop)."""

    model: Any
    optimizer: Any
    batch: Callable[[int], Any]
    loss: Callable[[Any, Any], Any]
    scheduler: Any = None


def resolve_entry(spec: str, repo_root: Path, where: str) -> EntryPoint:
    """Check statically that `spec` names a function defined in a file inside `repo_root`.

    `where` prefixes every error (e.g. "compilegate.yml:7: steps[0].entry").
    """
    target, _, function = spec.rpartition(":")
    root = repo_root.resolve()
    if target.endswith(".py") or "/" in target or "\\" in target:
        module = None
        candidate = (root / target).resolve()
        if not _is_inside(candidate, root):
            raise ConfigError(f"{where}: {target!r} is outside the repository {root}")
        if not candidate.is_file():
            raise ConfigError(f"{where}: file {target!r} does not exist in {root}")
    else:
        module = target
        candidate = _find_module_file(module, root)
        if candidate is None:
            raise ConfigError(
                f"{where}: module {module!r} is not a file inside the repository {root} "
                f"(looked for {module.replace('.', '/')}.py and .../__init__.py, also under src/)"
            )
    line = _find_definition(candidate, function, where, root)
    return EntryPoint(spec, str(candidate), function, line, module)


def _is_inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _find_module_file(module: str, root: Path) -> Path | None:
    relative = Path(*module.split("."))
    for base in (root, root / "src"):
        for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
            resolved = candidate.resolve()
            if resolved.is_file() and _is_inside(resolved, root):
                return resolved
    return None


def _find_definition(path: Path, function: str, where: str, root: Path) -> int:
    shown = path.relative_to(root) if _is_inside(path, root) else path
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(f"{where}: {shown}:{exc.lineno}: syntax error: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read {shown}: {exc}") from None
    defined = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[node.name] = node.lineno
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    defined[t.id] = node.lineno
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                defined[(alias.asname or alias.name).split(".")[0]] = node.lineno
    if function not in defined:
        names = ", ".join(sorted(n for n in defined if not n.startswith("_"))) or "none"
        raise ConfigError(
            f"{where}: {shown} defines no function {function!r} (top-level names: {names})"
        )
    return defined[function]


def load_factory(entry: EntryPoint, repo_root: Path) -> Callable[..., Any]:
    """Import the factory (child process only). Import errors become StepDefinitionError."""
    # Like `python path/file.py`: the file's folder is importable (sibling modules), and
    # so is the repository root (the user's packages).
    for folder in (str(repo_root), str(Path(entry.file).parent)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        if entry.module is not None:
            module = importlib.import_module(entry.module)
        else:
            name = "compilegate_user_" + Path(entry.file).stem
            spec = importlib.util.spec_from_file_location(name, entry.file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    except BaseException as exc:  # user code may raise anything, SystemExit included
        raise StepDefinitionError(
            f"importing {entry.spec} raised {describe_user_exception(exc, repo_root)}"
        ) from None
    factory = getattr(module, entry.function, None)
    if not callable(factory):
        raise StepDefinitionError(f"{entry.spec}: {entry.function!r} is not callable")
    return factory


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
    get = made.get if isinstance(made, dict) else (lambda key: getattr(made, key, None))
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
        if path.is_absolute() and _is_inside(path.resolve(), root):
            location = f" (at {path.resolve().relative_to(root)}:{frame.lineno})"
            break
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + message if message else ''}{location}"
