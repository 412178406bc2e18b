"""The type check is part of what CI runs, strict over the whole package, and the package
ships its annotations (PEP 561). The check itself runs in `make lint` (mypy takes 20-40 s
cold here, so it is not repeated as a test); these tests keep it from being dropped."""

from __future__ import annotations

import re

import tomllib

from repo_helpers import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _recipe(target: str) -> str:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    return makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]


def test_ci_runs_mypy():
    """`.ci/run` runs `make lint`, and `make lint` runs mypy after ruff."""
    assert re.search(r"^\s*\$\(BIN\)/python -m mypy\s*$", _recipe("lint"), re.MULTILINE)
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make lint$", ci, re.MULTILINE), ci


def test_mypy_is_strict_over_the_whole_package():
    """strict everywhere: no override turns a strict flag off for a module of ours."""
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["strict"] is True
    assert mypy["files"] == ["runner/compilegate"]
    loosened = [
        override
        for override in mypy.get("overrides", [])
        if any(str(m).startswith("compilegate") for m in _modules(override))
    ]
    assert loosened == []


def test_mypy_and_the_stubs_come_with_the_test_extra():
    """`make venv` installs `.[test]`: mypy and the stubs of what the package imports."""
    extra = " ".join(PYPROJECT["project"]["optional-dependencies"]["test"])
    for name in ("mypy", "types-PyYAML", "types-requests", "types-docker", "types-jsonschema"):
        assert re.search(rf"(^|\s){re.escape(name)}\b", extra), name


def test_the_package_ships_py_typed():
    assert (REPO_ROOT / "runner" / "compilegate" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["compilegate"]


def _modules(override: dict[str, object]) -> list[object]:
    module = override.get("module", [])
    return list(module) if isinstance(module, list) else [module]
