"""The Python versions compilegate says it runs on.

The runner (everything outside child/) runs on the Python `pyproject.toml`'s `requires-python`
names: pip refuses an older one, where the import of `typing.TypeGuard` would fail. What the
measuring child loads runs in the user's interpreter (`--python`), which may be as old as 3.8
(test_layout.py checks its syntax): here its library calls and the operations it evaluates
are checked too, statically by vermin and by importing every child module under a real
Python 3.8 when this machine has one, with a stand-in for torch (the import-time evaluations
are what a type alias such as `dict[str, Any]` breaks: TypeError on 3.8).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "runner" / "compilegate"
CHILD_LOADS = [
    PACKAGE / "__init__.py",
    PACKAGE / "paths.py",
    *sorted((PACKAGE / "child").glob("*.py")),
]
VERMIN = shutil.which("vermin") or str(Path(sys.executable).parent / "vermin")


def required_python() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r'^requires-python = ">=(\d+\.\d+)"$', text, re.MULTILINE)
    assert found, "pyproject.toml: requires-python is not of the form >=X.Y"
    return found.group(1)


def vermin_violations(target: str, paths: list[Path], *, annotations: bool) -> str:
    """What vermin finds in `paths` that needs a Python newer than `target` ("" for none)."""
    command = [VERMIN, "--no-tips", "--violations", f"-t={target}-", "--no-make-paths-absolute"]
    command += ["--eval-annotations"] if annotations else []
    done = subprocess.run(
        [*command, *map(str, paths)], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.strip() if done.returncode else ""


def test_the_runner_needs_no_python_newer_than_it_requires():
    runner = [
        p for p in sorted(PACKAGE.rglob("*.py")) if "child" not in p.relative_to(PACKAGE).parts
    ]
    # annotations too: results/model.py reads them at run time (typing.get_type_hints)
    assert vermin_violations(required_python(), runner, annotations=True) == ""


def test_what_the_child_loads_needs_no_python_newer_than_3_8():
    # annotations are strings there (`from __future__ import annotations`, test_layout.py)
    assert vermin_violations("3.8", CHILD_LOADS, annotations=False) == ""


def test_vermin_finds_what_3_8_cannot_run(tmp_path: Path):
    """The check above sees a dict union and zip(strict=): the two this project once had."""
    source = tmp_path / "newer.py"
    source.write_text("a = {1: 2} | {3: 4}\nb = zip([1], [2], strict=True)\n", encoding="utf-8")
    found = vermin_violations("3.8", [source], annotations=False)
    assert "dict union" in found and "zip(strict)" in found


def python_3_8() -> str | None:
    candidates = [
        shutil.which("python3.8"),
        *glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")),
    ]
    for candidate in candidates:
        if candidate and subprocess.run([candidate, "-c", ""], check=False).returncode == 0:
            return candidate
    return None


# torch for an import-only check: any attribute, submodule, call, subscript or base class.
STAND_IN = """
import importlib.abc, importlib.machinery, sys, types

class Anything(type):
    def __getattr__(cls, name):
        return Anything(name, (), {})
    def __call__(cls, *args, **kwargs):
        return args[0] if len(args) == 1 and callable(args[0]) and not kwargs else cls
    def __getitem__(cls, item):
        return cls
    def __or__(cls, other):
        return cls
    __ror__ = __or__

class Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything(name, (), {})

class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None
    def create_module(self, spec):
        module = Module(spec.name)
        module.__path__ = []
        module.__version__ = "2.4.1"
        return module
    def exec_module(self, module):
        pass

sys.meta_path.insert(0, Finder())
sys.path.insert(0, sys.argv[1])
import importlib
for name in sys.argv[2:]:
    importlib.import_module(name)
print("imported", len(sys.argv) - 2)
"""


def test_every_child_module_imports_on_python_3_8():
    interpreter = python_3_8()
    if interpreter is None:
        pytest.skip("no Python 3.8 on this machine (pyenv or PATH)")
    names = ["compilegate", "compilegate.paths"]
    names += [f"compilegate.child.{p.stem}" for p in CHILD_LOADS[2:] if p.stem != "__init__"]
    done = subprocess.run(
        [interpreter, "-I", "-c", STAND_IN, str(PACKAGE.parent), *names],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"imported {len(names)}"
