"""The package's public surface is `__all__`, no more and no less (as httpx guards its own)."""

from __future__ import annotations

import types

import compilegate.github as github_package


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name
        for name, value in vars(github_package).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name != "annotations"  # from __future__
    }
    assert sorted(public) == github_package.__all__
