"""The venv backend installs the repository's requirements as the Docker backend does
(issue 54, finding 7): `matrix --backend venv --requirements FILE` reads the file under the
same rules, and each version's environment gets it after torch, wheels only, torch held by a
constraint, in an environment of its own. No process starts: the installs are recorded."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from compilegate.cli.matrix_backends import matrix_backend
from compilegate.containers import venv_backend
from compilegate.containers.outcome import EnvironmentBuildError, RunCompleted
from compilegate.containers.venv_backend import (
    REQUIREMENTS_FILE,
    TORCH_CONSTRAINT_FILE,
    VenvBackend,
    install_commands,
)


def test_the_requirements_install_after_torch_wheels_only_and_torch_held(tmp_path: Path) -> None:
    venv = tmp_path / "torch-2.4.1-req-x"
    plain = install_commands("py", venv, "2.4.1", with_requirements=False, source_builds=False)
    assert plain == [
        ["py", "-m", "venv", str(venv)],
        [str(venv / "bin/python"), "-m", "pip", "install", "torch==2.4.1"],
    ]
    wheels = install_commands("py", venv, "2.4.1", with_requirements=True, source_builds=False)
    assert wheels[:2] == plain
    assert wheels[2] == [
        str(venv / "bin/python"), "-m", "pip", "install", "--progress-bar", "off",
        "--only-binary=:all:", "--constraint", str(venv / TORCH_CONSTRAINT_FILE),
        "--requirement", str(venv / REQUIREMENTS_FILE),
    ]  # fmt: skip
    built = install_commands("py", venv, "2.4.1", with_requirements=True, source_builds=True)
    assert "--only-binary=:all:" not in built[2] and built[2][-1] == wheels[2][-1]


def test_each_set_of_requirements_has_an_environment_of_its_own(tmp_path: Path) -> None:
    def folder(requirements: bytes | None, source_builds: bool = False) -> str:
        backend = VenvBackend(
            venv_root=tmp_path,
            requirements=requirements,
            requirements_source_builds=source_builds,
        )
        return backend.venv_dir("2.4.1").name

    assert folder(None) == folder(b"# nothing pip reads\n\n") == "torch-2.4.1"
    six = folder(b"six\n")
    assert six.startswith("torch-2.4.1-req-")
    assert folder(b"# the repository's own\nsix   # a comment\n") == six  # as pip reads it
    assert len({six, folder(b"six==1.16.0\n"), folder(b"six\n", source_builds=True)}) == 3


class RecordedInstalls:
    """run_streaming's stand-in: records each command, and what the requirements step finds
    in the environment's folder; fails the command at `fail_at`."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.commands: list[list[str]] = []
        self.files: dict[str, bytes] = {}
        self.fail_at = fail_at

    def __call__(self, command, *, env, timeout_s, prefix, log) -> RunCompleted:
        self.commands.append(list(command))
        if "--requirement" in command:
            folder = Path(command[command.index("--requirement") + 1]).parent
            self.files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
        if len(self.commands) - 1 == self.fail_at:
            return RunCompleted(1, 0.1, None, ("ERROR: No matching distribution found for six",))
        return RunCompleted(0, 0.1)


def test_prepare_writes_the_files_installs_them_and_is_ready(tmp_path, monkeypatch) -> None:
    installs = RecordedInstalls()
    monkeypatch.setattr(venv_backend, "run_streaming", installs)
    data = b"six  # the step imports it\n"
    backend = VenvBackend(venv_root=tmp_path, requirements=data, log=lambda line: None)
    prepared = Path(backend.prepare("2.4.1"))
    assert prepared == backend.venv_dir("2.4.1")
    assert [c[:4] for c in installs.commands][1:] == [
        [str(prepared / "bin/python"), "-m", "pip", "install"]
    ] * 2
    assert installs.files == {
        REQUIREMENTS_FILE: data,  # the bytes read from the checkout, as the image gets them
        TORCH_CONSTRAINT_FILE: b"torch==2.4.1\n",
    }
    assert (prepared / venv_backend.READY_MARKER).is_file()


def test_a_requirements_install_that_fails_says_so_and_how_in_one_line(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(venv_backend, "run_streaming", RecordedInstalls(fail_at=2))
    backend = VenvBackend(venv_root=tmp_path, requirements=b"six\n", log=lambda line: None)
    with pytest.raises(EnvironmentBuildError) as raised:
        backend.prepare("2.4.1")
    message = str(raised.value)
    assert message.startswith("torch 2.4.1: virtual environment failed: --requirements: pip ")
    assert "--requirements-allow-source-builds" in message
    assert "No matching distribution found for six" in message
    assert "\n" not in message
    assert not backend.venv_dir("2.4.1").exists()  # never reused half-made


def test_matrix_gives_the_venv_backend_the_requirements_it_read(tmp_path: Path) -> None:
    args = argparse.Namespace(
        backend="venv",
        rebuild=False,
        requirements_bytes=b"six\n",
        requirements_allow_source_builds=False,
    )
    backend, _ = matrix_backend(args, None, [], print)
    assert backend.requirements == b"six\n"
    assert backend.venv_dir("2.4.1").name.startswith("torch-2.4.1-req-")


def test_a_step_that_cannot_import_a_module_gets_a_one_line_hint(tmp_path: Path) -> None:
    from gate_docs import result

    from compilegate.gate.run_set import ResultSource, judge_run_set
    from compilegate.report.run_set_text import requirements_hint

    def run_set_of(error: str):
        document = result()
        document["steps"][0].update(status="error", error=error, device=None)
        path = tmp_path / "result.json"
        path.write_text(json.dumps(document))
        return judge_run_set([ResultSource(path, "torch-2.4.1")], None)

    hint = requirements_hint(
        run_set_of("ModuleNotFoundError: No module named 'numpy' (at models.py:14)")
    )
    assert hint is not None and "\n" not in hint
    assert hint.startswith("hint: torch ") and "'numpy'" in hint and "--requirements FILE" in hint
    assert requirements_hint(run_set_of("factory raised ValueError")) is None
