"""Every address the schemas and `compilegate init` give an editor is the project's own
(issue 51): an editor with the YAML extension fetches a config's `$schema=` each time the
file is opened, so a domain nobody in the project holds would hand whoever registers it a
log of who opens the file and control over completions and hover links. The schemas are
published as files of compilegate's repository, the one a workflow's `uses:` names, at the
release's tag (the package's version)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from compilegate import __version__
from compilegate.config.starter import Machine, schema_reference, starter_config_text
from compilegate.schemas import SCHEMA_NAMES, load_schema, schema_dir
from repo_helpers import REPO_ROOT

URL = re.compile(r"https?://[^\s\"')<>`]+")
META_SCHEMA = "https://json-schema.org/draft/2020-12/schema"


def action_repository() -> str:
    """owner/name of the action, as the README's workflow names it in `uses:`."""
    found = re.search(
        r"uses: ([\w.-]+/[\w.-]+)@<release commit SHA>", (REPO_ROOT / "README.md").read_text()
    )
    assert found is not None
    return found.group(1)


def project_address(url: str) -> bool:
    parts = urlsplit(url)
    repository = action_repository()
    return parts.scheme == "https" and (
        (parts.netloc == "raw.githubusercontent.com" and parts.path.startswith(f"/{repository}/"))
        or (parts.netloc == "github.com" and parts.path.startswith(f"/{repository}"))
    )


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_a_schema_is_named_by_its_file_in_the_repository_at_the_release_tag(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == META_SCHEMA
    assert schema["$id"] == (
        f"https://raw.githubusercontent.com/{action_repository()}/v{__version__}/"
        f"schemas/{name}.schema.json"
    )


def test_every_address_in_the_schemas_is_the_projects_own() -> None:
    for path in sorted(schema_dir().glob("*.schema.json")):
        text = path.read_text(encoding="utf-8")
        foreign = [u for u in URL.findall(text) if u != META_SCHEMA and not project_address(u)]
        assert foreign == [], path.name


def test_init_names_the_projects_own_address_for_an_installed_schema(tmp_path: Path) -> None:
    """An installed copy (in a virtual environment no clone has) is named by its `$id`."""
    venv = tmp_path / "venv"
    installed = venv / "share" / "compilegate" / "schemas" / "config.schema.json"
    installed.parent.mkdir(parents=True)
    shutil.copy(schema_dir() / "config.schema.json", installed)
    (tmp_path / "repo").mkdir()
    reference = schema_reference(installed, tmp_path / "repo", venv)
    text = starter_config_text(
        "train/step.py:make_step",
        Machine(device="cpu", torch_version="2.13.0", cpu_count=2),
        name="step",
        schema_path=reference,
        version=__version__,
    )
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={reference}"
    urls = URL.findall(text)
    assert urls == [reference] and project_address(reference), urls
