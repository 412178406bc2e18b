"""Where an installed compilegate finds its schemas (schemas.schema_dir): the wheel puts
them under share/compilegate/schemas of whatever scheme pip installed into."""

from __future__ import annotations

import importlib.metadata

from compilegate import schemas


def test_a_user_install_finds_the_schemas_its_record_lists(tmp_path, monkeypatch):
    """`pip install --user`: site-packages under ~/.local/lib, the schemas under
    ~/.local/share, and sys.prefix (the system's Python) holds neither."""
    site = tmp_path / "lib/python3.11/site-packages"
    shared = tmp_path / "share/compilegate/schemas"
    shared.mkdir(parents=True)
    site.mkdir(parents=True)
    (shared / "config.schema.json").write_text("{}")

    class Recorded(importlib.metadata.PackagePath):
        def locate(self):
            return site / self

    record = [
        Recorded("compilegate/__init__.py"),
        Recorded("../../../share/compilegate/schemas/config.schema.json"),
    ]
    monkeypatch.setattr(importlib.metadata, "files", lambda name: record)
    assert schemas._recorded_schema_dirs() == [shared.resolve()]


def test_no_installed_distribution_means_no_recorded_folder(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", missing)
    assert schemas._recorded_schema_dirs() == []
