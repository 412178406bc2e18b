"""Two sides of a paired run in one child: the base's and the head's user code side by side.

Both trees hold the same module names (step.py, the user's packages). Each side's modules
are kept apart: while one side is active, sys.modules holds only its user modules and
sys.path only its folders; what it imported is put aside when it leaves, so the other side
imports its own copies. Functions keep their own modules' globals, so a side's step keeps
running its own code after it left. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ..paths import is_inside
from .user_code import add_import_paths

CACHE_VARIABLES = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


class SideModules:
    """One side's user modules (those whose file lies in its tree) and import folders."""

    def __init__(self, repo_root: Path, folders: list[str], cache_dir: str | None = None) -> None:
        self.root = repo_root.resolve()
        self.folders = folders
        self.cache_dir = cache_dir
        self.modules: dict[str, ModuleType] = {}

    def owns(self, module: Any) -> bool:
        file = getattr(module, "__file__", None)
        return isinstance(file, str) and is_inside(Path(os.path.abspath(file)).resolve(), self.root)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """This side's modules, folders and Inductor cache while the block runs."""
        saved_path = list(sys.path)
        saved_env = {name: os.environ.get(name) for name in CACHE_VARIABLES}
        sys.modules.update(self.modules)
        add_import_paths(self.folders, sys.path)
        if self.cache_dir:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.cache_dir
            os.environ["TRITON_CACHE_DIR"] = os.path.join(self.cache_dir, "triton")
        try:
            yield
        finally:
            for name, module in list(sys.modules.items()):
                if name.startswith("compilegate_user_") or self.owns(module):
                    self.modules[name] = sys.modules.pop(name)
            sys.path[:] = saved_path
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
