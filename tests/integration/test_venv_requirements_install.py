"""The venv backend's requirements install, run by the real pip (issue 54, finding 7): the
command `matrix --backend venv --requirements FILE` runs in each version's environment after
torch (wheels only, torch held by a constraint) installs the file's packages there. In a bare
venv, without the torch install the backend does first (a minute and a gigabyte per version:
tests/integration/containers/test_venv_matrix.py pays it once for the plain environment);
the whole prepare, in order, is tests/unit/containers/test_venv_requirements.py's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compilegate.containers.venv_backend import (
    REQUIREMENTS_FILE,
    REQUIREMENTS_STEP,
    TORCH_CONSTRAINT_FILE,
    install_commands,
    run_streaming,
)


def test_the_requirements_command_installs_the_repositorys_packages_not_torch(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "torch-2.13.0-req-test"
    commands = install_commands(
        sys.executable, venv, "2.13.0", with_requirements=True, source_builds=False
    )
    subprocess.run(commands[0], check=True, timeout=300)  # the venv, with its pip
    (venv / REQUIREMENTS_FILE).write_text("six  # the step imports it\n")
    (venv / TORCH_CONSTRAINT_FILE).write_text("torch==2.13.0\n")
    lines: list[str] = []
    completed = run_streaming(
        commands[REQUIREMENTS_STEP], env=None, timeout_s=300, prefix="[torch 2.13.0]",
        log=lines.append,
    )  # fmt: skip
    assert completed.exit_code == 0, "\n".join(lines[-20:])
    python = str(venv / "bin/python")
    imported = subprocess.run(
        [python, "-c", "import six; print(six.__name__)"], capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert imported.stdout.strip() == "six", imported.stderr
    # The constraint holds torch's version; it installs nothing the file does not name.
    no_torch = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=60)
    assert no_torch.returncode != 0
