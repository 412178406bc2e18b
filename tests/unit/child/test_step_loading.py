from __future__ import annotations

from pathlib import Path

import pytest

from compilegate.child.user_code import describe_user_exception
from compilegate.errors import ConfigError
from compilegate.run.entry_check import resolve_entry


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "train.py").write_text(
        "import torch\n\nCONSTANT = 1\n\n\ndef make_step(device='cpu'):\n    return {}\n"
    )
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("def make(device='cpu'):\n    pass\n")
    (tmp_path / "broken.py").write_text("def make_step(:\n")
    return tmp_path


def test_file_entry_resolves_with_definition_line(repo: Path) -> None:
    entry = resolve_entry("steps/train.py:make_step", repo, "cfg")
    assert entry.file == str(repo / "steps" / "train.py") and entry.line == 6
    assert entry.module is None


def test_module_entry_resolves_under_src(repo: Path) -> None:
    entry = resolve_entry("pkg:make", repo, "cfg")
    assert entry.module == "pkg" and entry.file.endswith("src/pkg/__init__.py")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("steps/nope.py:make_step", "file 'steps/nope.py' does not exist"),
        (
            "steps/train.py:make_stepp",
            "defines no function 'make_stepp' (top-level names: CONSTANT, make_step, torch)",
        ),
        ("../outside.py:make_step", "is outside the repository"),
        ("/etc/passwd.py:make_step", "is outside the repository"),
        ("os:system", "module 'os' is not a file inside the repository"),
        ("broken.py:make_step", "broken.py:1: syntax error"),
    ],
)
def test_bad_entries_say_what_is_wrong(repo: Path, spec: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_entry(spec, repo, "compilegate.yml: steps[0].entry")
    assert str(info.value).startswith("compilegate.yml: steps[0].entry: ")
    assert expected in str(info.value)


def test_symlink_escaping_the_repo_is_refused(repo: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "evil.py"
    outside.write_text("def make_step(device='cpu'):\n    pass\n")
    (repo / "link.py").symlink_to(outside)
    with pytest.raises(ConfigError, match="outside the repository"):
        resolve_entry("link.py:make_step", repo, "cfg")


def test_user_exception_points_at_the_users_line(repo: Path) -> None:
    code = compile(
        "def f():\n    raise ValueError('bad data\\nmore')\n", str(repo / "u.py"), "exec"
    )
    scope: dict = {}
    exec(code, scope)
    try:
        scope["f"]()
    except ValueError as exc:
        assert describe_user_exception(exc, repo) == "ValueError: bad data (at u.py:2)"
