"""Check a declared entry statically, in the parent, before anything is measured.

Without importing user code: the file or module must exist inside the repository and define
the function at top level. Errors are ConfigErrors naming the config key.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..checkout_files import STEP_SOURCE_MAX_BYTES, read_checkout_file
from ..child.protocol import EntryPoint
from ..errors import ConfigError
from ..paths import is_inside


def resolve_entry(spec: str, repo_root: Path, where: str) -> EntryPoint:
    """Check statically that `spec` names a function defined in a file inside `repo_root`.

    `where` prefixes every error (e.g. "compilegate.yml:7: steps[0].entry").
    """
    target, _, function = spec.rpartition(":")
    root = repo_root.resolve()
    if target.endswith(".py") or "/" in target or "\\" in target:
        module = None
        candidate = (root / target).resolve()
        if not is_inside(candidate, root):
            raise ConfigError(f"{where}: {target!r} is outside the repository {root}")
        if not candidate.is_file():
            raise ConfigError(f"{where}: file {target!r} does not exist in {root}")
    else:
        module = target
        found = _find_module_file(module, root)
        if found is None:
            raise ConfigError(
                f"{where}: module {module!r} is not a file inside the repository {root} "
                f"(looked for {module.replace('.', '/')}.py and .../__init__.py, also under src/)"
            )
        candidate = found
    line = _find_definition(candidate, function, where, root)
    return EntryPoint(spec, str(candidate), function, line, module)


def _find_module_file(module: str, root: Path) -> Path | None:
    relative = Path(*module.split("."))
    for base in (root, root / "src"):
        for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
            resolved = candidate.resolve()
            if resolved.is_file() and is_inside(resolved, root):
                return resolved
    return None


def _find_definition(path: Path, function: str, where: str, root: Path) -> int:
    shown = path.relative_to(root) if is_inside(path, root) else path
    # `path` is resolved and inside `root`: read it as any file of the checkout (a regular
    # file, capped, no link swapped in since), it is parsed here on the host.
    source = read_checkout_file(
        path, root, max_bytes=STEP_SOURCE_MAX_BYTES, shown=f"{where}: {shown}", error=ConfigError
    )
    try:
        tree = ast.parse(source.decode("utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(f"{where}: {shown}:{exc.lineno}: syntax error: {exc.msg}") from None
    except (UnicodeDecodeError, ValueError) as exc:
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
