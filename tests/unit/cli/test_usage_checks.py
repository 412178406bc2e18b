"""Usage mistakes are exit 2 with one line, found before anything is measured: an old
jsonschema, an `--out` that cannot be a file, an unhashable YAML key."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from compilegate import cli, schemas
from compilegate.cli.run_command import _check_out_path
from compilegate.config.loading import load_config_text
from compilegate.errors import ConfigError, UsageError


@pytest.fixture
def old_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata,
        "version",
        lambda name: "4.17.3" if name == "jsonschema" else real(name),
    )


def test_an_old_jsonschema_is_named_with_the_fix(old_jsonschema: None) -> None:
    with pytest.raises(UsageError) as info:
        schemas.validation_errors({}, "result")
    assert str(info.value) == (
        "jsonschema 4.17.3 is installed, compilegate needs jsonschema>=4.18: "
        "pip install --upgrade 'jsonschema>=4.18'"
    )


def test_an_old_jsonschema_is_exit_2_from_the_cli(
    old_jsonschema: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "compilegate.yml"
    config.write_text("version: 1\nsteps:\n  - name: a\n    entry: a.py:f\n")
    assert cli.main(["run", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "jsonschema 4.17.3 is installed" in err
    document = tmp_path / "r.json"
    document.write_text("{}")
    assert cli.main(["compare", "--baseline", str(document), "--result", str(document)]) == 2
    assert "jsonschema 4.17.3 is installed" in capsys.readouterr().err


def test_the_installed_jsonschema_is_new_enough() -> None:
    schemas.require_jsonschema()


def test_out_must_be_able_to_become_a_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a directory"):
        _check_out_path(tmp_path)
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(UsageError, match=f"{a_file} is not a directory"):
        _check_out_path(a_file / "sub" / "r.json")
    _check_out_path(tmp_path / "new" / "folder" / "r.json")
    _check_out_path(tmp_path / "r.json")


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[a, b]: 1\n", "list"), ("? [a, b]: 1\n", "mapping"), ("{x: 1}: 2\n", "mapping")],
)
def test_an_unhashable_yaml_key_is_a_config_error(tmp_path: Path, text: str, kind: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config_text("version: 1\n" + text, source="c.yml", repo_root=tmp_path)
    message = f"c.yml:2: malformed YAML: a key must be a plain value, found a {kind}"
    assert str(info.value) == message
