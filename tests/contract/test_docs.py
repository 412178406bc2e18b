"""The docs (docs/, mkdocs.yml): the generated reference pages are current, the real build is
clean, and a broken link fails the build, naming it.

mkdocs is a test dependency (pyproject.toml), so these never skip: `make docs` and `.ci/run`
run the same strict build.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_helpers import REPO_ROOT


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_reference", REPO_ROOT / "scripts" / "gen_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(project: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _copy_of_the_docs(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(REPO_ROOT / "docs", project / "docs")
    shutil.copy(REPO_ROOT / "mkdocs.yml", project / "mkdocs.yml")
    (project / "scripts").mkdir()
    shutil.copy(REPO_ROOT / "scripts" / "mkdocs_hooks.py", project / "scripts" / "mkdocs_hooks.py")
    return project


def test_the_config_reference_is_generated_from_the_current_schema():
    page = _generator().CONFIG_PAGE
    assert page.read_text(encoding="utf-8") == _generator().config_reference(), (
        f"{page.relative_to(REPO_ROOT)} is stale: run python scripts/gen_reference.py"
    )


def test_the_cli_reference_is_generated_from_the_current_parser():
    generator = _generator()
    committed = generator.CLI_PAGE.read_text(encoding="utf-8")
    # argparse's layout changes between Python versions (3.13 shortened usage lines): the page
    # records the version it was made with, and only that version can reproduce it exactly.
    made_with = generator.python_of(committed)
    assert made_with, "docs/reference/cli.md no longer says which Python wrote it"
    if made_with != sys.version_info[:2]:
        pytest.skip(
            f"docs/reference/cli.md was generated with Python {made_with[0]}.{made_with[1]}, "
            f"this is {sys.version_info.major}.{sys.version_info.minor}: argparse lays help out "
            "differently; compared under the Python that wrote it"
        )
    assert committed == generator.cli_reference(), (
        "docs/reference/cli.md is stale: run python scripts/gen_reference.py"
    )


def test_every_command_flag_and_config_key_is_in_the_reference():
    """Whatever Python runs the tests (the exact comparison above needs the one that wrote the
    page): every command and each of its flags, every schema key, is on its page."""
    generator = _generator()
    cli = generator.CLI_PAGE.read_text(encoding="utf-8")
    for name, _summary, parser in generator._commands(generator.build_parser(), "compilegate"):
        heading = f"## `{name}`\n"
        assert heading in cli, f"docs/reference/cli.md has no section for {name}"
        section = cli.split(heading, 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in section, f"{name} {flag} is not in docs/reference/cli.md"
    config = generator.CONFIG_PAGE.read_text(encoding="utf-8")
    schema = json.loads(generator.SCHEMA.read_text(encoding="utf-8"))

    def keys(node, prefix=""):
        for key, prop in node.get("properties", {}).items():
            yield prefix + key
            yield from keys(prop, f"{prefix}{key}.")

    for node in (schema, *schema["$defs"].values()):
        for key in keys(node):
            assert f"| `{key}` |" in config, f"{key} is not in docs/reference/config.md"


def test_the_docs_build_strictly_without_a_warning(tmp_path):
    built = _build(REPO_ROOT, tmp_path / "site")
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    assert (tmp_path / "site" / "gate.html").is_file()
    # A table's `trust\|ignore` (GitHub's escape) reads `trust|ignore` on the site too
    # (scripts/mkdocs_hooks.py), in one cell.
    page = (tmp_path / "site" / "command-line.html").read_text(encoding="utf-8")
    assert "<code>--config-env trust|ignore</code></td>" in page


@pytest.mark.parametrize(
    ("link", "named"),
    [
        ("[the old gate page](no-such-page.md)", "no-such-page.md"),
        ("[exit codes](gate.md#no-such-anchor)", "no-such-anchor"),
        (
            "[a folder outside the docs](../examples/report/comment.md)",
            "../examples/report/comment.md",
        ),
    ],
    ids=["missing-page", "missing-anchor", "outside-docs"],
)
def test_a_broken_link_fails_the_build_and_is_named(tmp_path, link, named):
    project = _copy_of_the_docs(tmp_path)
    assert _build(project, tmp_path / "clean").returncode == 0, "the copy fails unplanted"
    page = project / "docs" / "numbers.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\nSee {link}.\n", encoding="utf-8")
    built = _build(project, tmp_path / "site")
    assert built.returncode != 0, "a broken link built cleanly:\n" + built.stderr
    assert named in built.stderr and "numbers.md" in built.stderr, built.stderr


def test_make_docs_builds_strictly_and_loudly():
    """`make docs` (what .ci/run runs) keeps the warnings: mkdocs 1.6.1 under --quiet drops
    them before --strict counts them, and a broken link then builds cleanly (seen once)."""
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    build = next(line for line in recipe.splitlines() if "mkdocs build" in line)
    assert "--strict" in build
    assert not re.search(r"\s(--quiet|-q)\b", build), build
    assert "scripts/gen_reference.py --check" in recipe
    assert "make docs" in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_the_front_pages_link_only_to_files_that_exist(name):
    """README.md and CONTRIBUTING.md live outside docs/, so mkdocs does not check them."""
    text = (REPO_ROOT / name).read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    missing = [t for t in targets if not (REPO_ROOT / t.split("#", 1)[0]).exists()]
    assert not missing, f"{name} links to files that do not exist: {missing}"


def test_the_readme_is_a_front_door():
    """What it does, the workflow snippet on the first screen, the two commands CI and the
    graders run, a link to every docs page; at most 150 lines."""
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert any("uses: compilegate/compilegate@" in line for line in lines[:60])
    text = "\n".join(lines)
    assert "make demo" in text and "make test" in text
    for page in sorted((REPO_ROOT / "docs").rglob("*.md")):
        relative = page.relative_to(REPO_ROOT).as_posix()
        if relative != "docs/index.md":
            assert f"]({relative})" in text, f"the README does not link to {relative}"
