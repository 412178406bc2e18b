"""The requirements file is read from the checkout once (no link) and, wheels only, refused
when a line could make pip run a package's build code anyway (containers/requirements.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compilegate.containers.requirements import read_requirements, source_build_risk
from compilegate.errors import UsageError


@pytest.mark.parametrize(
    "line",
    [
        "six",
        "six==1.16.0",
        "transformers[torch]>=4.40,<5 ; python_version >= '3.10'",
        "numpy==2.0.0 --hash=sha256:abc --hash=sha256:def",
        "--index-url https://download.pytorch.org/whl/cpu",
        "--extra-index-url=https://example.org/simple",
        "--pre",
    ],
)
def test_plain_requirements_and_index_options_pass(line: str) -> None:
    assert source_build_risk(line) is None


@pytest.mark.parametrize(
    "line, why",
    [
        ("--no-binary :all:", "--no-binary"),  # on its own line it beats --only-binary
        ("--no-binary=six", "--no-binary"),
        ("-e git+https://github.com/x/y#egg=y", "-e"),
        ("-r other.txt", "-r"),
        ("six @ https://example.org/six-1.0.tar.gz", "direct reference"),
        ("git+https://github.com/x/y", "direct reference"),
        ("./vendored/pkg", "not a package name"),
        ("pkg-1.0.tar.gz", "built from source"),
        ("six --no-binary six", "--no-binary"),
    ],
)
def test_lines_that_would_build_from_source_are_named(line: str, why: str) -> None:
    problem = source_build_risk(line)
    assert problem is not None and why in problem


def test_read_requirements_names_the_line_and_the_opt_out(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# pinned\nsix==1.16.0 \\\n  --hash=sha256:abc\n--no-binary :all:\n")
    with pytest.raises(UsageError) as raised:
        read_requirements(requirements, tmp_path, allow_source_builds=False)
    message = str(raised.value)
    assert message.startswith(f"{requirements}:4: the option --no-binary is refused")
    assert "--requirements-allow-source-builds" in message and raised.value.exit_code == 2
    data = read_requirements(requirements, tmp_path, allow_source_builds=True)
    assert data == requirements.read_bytes()


def test_a_requirements_link_to_a_secret_is_refused_unread(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "credentials").write_text("ghp_secret\n")
    (repo / "requirements.txt").symlink_to("../credentials")
    with pytest.raises(UsageError) as raised:
        read_requirements(repo / "requirements.txt", repo, allow_source_builds=True)
    assert "symbolic link" in str(raised.value) and "ghp_secret" not in str(raised.value)
