"""The child's modules import in a fresh interpreter without the parent's libraries (the rest
of the layout is tested in tests/unit/test_layout.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from test_layout import PARENT_ONLY_LIBRARIES, module_name, modules

from repo_helpers import RUNNER


def test_every_child_module_imports_where_parent_libraries_cannot():
    """A fresh interpreter in which yaml, jsonschema, requests and docker raise ImportError."""
    pytest.importorskip("torch")
    names = [module_name(p) for p in modules("child")]
    script = textwrap.dedent(
        f"""
        import importlib, sys
        BLOCKED = {PARENT_ONLY_LIBRARIES!r}

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError("blocked for this test: " + name)
                return None

        sys.meta_path.insert(0, Block())
        for name in {names!r}:
            importlib.import_module(name)
        for blocked in BLOCKED:
            assert blocked not in sys.modules, blocked
        print("imported", len({names!r}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(RUNNER), "PATH": "/usr/bin:/bin"},
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"imported {len(names)}" in done.stdout
