"""Files of the checkout are read without following links, only when regular, within a cap
(checkout_files.py): what a pull request's links could make the host read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compilegate.checkout_files import path_in_repository, read_checkout_file
from compilegate.errors import ConfigError, UsageError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "ci").mkdir(parents=True)
    (repo / "ci/gate.yml").write_text("version: 1\n")
    (tmp_path / "secret.txt").write_text("credential\n")
    return repo


def read(path: Path, repo: Path, max_bytes: int = 1 << 20) -> bytes:
    return read_checkout_file(path, repo, max_bytes=max_bytes)


def test_a_regular_file_of_the_repository_is_read(repo: Path) -> None:
    assert read(repo / "ci/gate.yml", repo) == b"version: 1\n"
    assert read(repo / "ci/../ci/gate.yml", repo) == b"version: 1\n"


@pytest.mark.parametrize(
    "name, target",
    [
        ("requirements.txt", "../secret.txt"),  # out of the repository
        ("compilegate.yml", "ci/gate.yml"),  # another file of it
        ("zero.yml", "/dev/zero"),  # endless
        ("dangling.yml", "nowhere.yml"),
    ],
)
def test_a_link_as_the_file_is_refused_in_one_line(repo: Path, name: str, target: str) -> None:
    (repo / name).symlink_to(target)
    with pytest.raises(UsageError) as raised:
        read(repo / name, repo)
    message = str(raised.value)
    assert message.startswith(str(repo / name)) and "symbolic link" in message
    assert "\n" not in message and raised.value.exit_code == 2


def test_a_linked_folder_on_the_way_is_refused(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "gate.yml").write_text("version: 1\n")
    (repo / "conf").symlink_to(outside)
    (repo / "inner").symlink_to("ci")
    for path in (repo / "conf/gate.yml", repo / "inner/gate.yml"):
        with pytest.raises(UsageError, match="symbolic link"):
            read(path, repo)


def test_devices_fifos_folders_and_oversized_files_are_refused(repo: Path, tmp_path: Path) -> None:
    os.mkfifo(repo / "fifo.yml")  # opening it must not wait for a writer
    with pytest.raises(UsageError, match="not a regular file"):
        read(repo / "fifo.yml", repo)
    with pytest.raises(UsageError, match="a folder"):
        read(repo / "ci", repo)
    with pytest.raises(UsageError, match="not a regular file"):
        read(Path("/dev/zero"), repo)  # outside: the operator's path, still no device
    (repo / "big.txt").write_bytes(b"x" * 2048)
    with pytest.raises(UsageError, match="2048 bytes, over the 1024 bytes"):
        read(repo / "big.txt", repo, max_bytes=1024)
    with pytest.raises(UsageError, match="no such file"):
        read(repo / "missing.yml", repo)


def test_a_file_outside_the_repository_is_the_operators_but_not_a_link(
    repo: Path, tmp_path: Path
) -> None:
    assert read(tmp_path / "secret.txt", repo) == b"credential\n"
    (tmp_path / "link.txt").symlink_to("secret.txt")
    with pytest.raises(UsageError, match="symbolic link"):
        read(tmp_path / "link.txt", repo)


def test_the_error_class_and_shown_name_are_the_callers(repo: Path) -> None:
    (repo / "compilegate.yml").symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"^--config x: compilegate.yml is a symbolic link"):
        read_checkout_file(
            repo / "compilegate.yml", repo, max_bytes=10, shown="--config x", error=ConfigError
        )


def test_path_in_repository_goes_by_names(repo: Path, tmp_path: Path) -> None:
    assert path_in_repository(repo / "ci/gate.yml", repo) == Path("ci/gate.yml")
    assert path_in_repository(repo / "ci/../x.yml", repo) == Path("x.yml")
    assert path_in_repository(tmp_path / "secret.txt", repo) is None
    (tmp_path / "alias").symlink_to(repo)  # a root named through a link counts as itself
    assert path_in_repository(repo / "ci/gate.yml", tmp_path / "alias") == Path("ci/gate.yml")
