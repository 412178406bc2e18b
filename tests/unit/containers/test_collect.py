"""The run's output folder is read as hostile input: only a regular result.json of bounded
size is copied, no link is followed, nothing is written into it."""

from __future__ import annotations

import os
from pathlib import Path

from compilegate.containers.collect import collect_result, discard, staging_folder


def test_a_regular_result_is_copied_and_the_staging_folder_removed(tmp_path: Path) -> None:
    staging = staging_folder("2.13.0")
    (staging / "result.json").write_text('{"ok": 1}')
    (staging / "other.txt").write_text("never read")
    got = collect_result(staging, tmp_path / "clean")
    discard(staging)
    assert got.result_path == tmp_path / "clean" / "result.json" and got.refused is None
    assert got.result_path.read_text() == '{"ok": 1}'
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == ["result.json"]
    assert not staging.exists()


def test_a_link_named_result_json_is_refused_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("token=s3cret")
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "result.json").symlink_to(secret)
    got = collect_result(staging, tmp_path / "clean")
    assert got.result_path is None and "not a regular file" in str(got.refused)
    assert not (tmp_path / "clean" / "result.json").exists()
    discard(staging)
    assert secret.read_text() == "token=s3cret"  # the link was removed, not its target


def test_a_fifo_a_folder_and_an_oversized_file_are_refused(tmp_path: Path) -> None:
    for make in (
        lambda p: os.mkfifo(p),  # a reader that opened it blocking would hang forever
        lambda p: p.mkdir(),
        lambda p: p.write_bytes(b"x" * 2048),
    ):
        staging = tmp_path / f"staging-{len(list(tmp_path.iterdir()))}"
        staging.mkdir()
        make(staging / "result.json")
        got = collect_result(staging, tmp_path / "clean", max_bytes=1024)
        assert got.result_path is None and got.refused, got


def test_a_staging_folder_swapped_for_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "result.json").write_text("{}")
    (tmp_path / "staging").symlink_to(elsewhere)
    got = collect_result(tmp_path / "staging", tmp_path / "clean")
    assert got.result_path is None and "unusable" in str(got.refused)


def test_no_result_is_no_result(tmp_path: Path) -> None:
    got = collect_result(tmp_path, tmp_path / "clean")
    assert got.result_path is None and got.refused is None
