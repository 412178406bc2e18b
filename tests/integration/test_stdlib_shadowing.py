"""Item 12 through the real CLI: repository files named like standard-library modules
(json.py, platform.py, logging.py at the root) never replace what the harness imports, user
code still imports from the repository and from a src/ layout, and the bootstrap runs under
older interpreters that `--python` may name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import run_cli, write_config

from compilegate.child.protocol import ChildSpec
from compilegate.run.launcher import ChildLauncher

SHADOWS = ("platform", "json", "logging", "random", "types", "tempfile")
SRC_STEP = """\
import torch
from torch import nn

from shadowpkg.model import build_model
from repo_helpers import ROWS


def make_step(device="cpu"):
    torch.manual_seed(0)
    model = build_model().to(device)
    xs = torch.randn(4, ROWS, 8)
    ys = torch.randint(0, 2, (4, ROWS))
    return {
        "model": model,
        "optimizer": torch.optim.SGD(model.parameters(), lr=0.01),
        "batch": lambda i: (xs[i % 4].to(device), ys[i % 4].to(device)),
        "loss": lambda m, b: nn.functional.cross_entropy(m(b[0]), b[1]),
    }
"""


@pytest.fixture
def shadowing_repo(tmp_path: Path) -> Path:
    """A repository whose root shadows standard-library modules, with a src/ layout package."""
    repo = tmp_path / "repo"
    (repo / "src" / "shadowpkg").mkdir(parents=True)
    for name in SHADOWS:
        (repo / f"{name}.py").write_text(
            f"raise ImportError('the repository file {name}.py was imported instead of the "
            "standard library')\n"
        )
    (repo / "repo_helpers.py").write_text("ROWS = 6\n")
    (repo / "src" / "shadowpkg" / "__init__.py").write_text("")
    (repo / "src" / "shadowpkg" / "model.py").write_text(
        "from torch import nn\n\n\ndef build_model():\n    return nn.Linear(8, 2)\n"
    )
    (repo / "src" / "shadowpkg" / "step.py").write_text(SRC_STEP)
    return repo


def test_stdlib_named_repository_files_do_not_replace_the_harness_imports(
    shadowing_repo: Path,
) -> None:
    config = write_config(
        shadowing_repo / "compilegate.yml",
        "  - name: src-module\n    entry: shadowpkg.step:make_step\n"
        + QUICK
        + "  - name: src-file\n    entry: src/shadowpkg/step.py:make_step\n"
        + QUICK,
    )
    run = run_cli("run", "--config", str(config), "--out", str(shadowing_repo / "r.json"))
    assert "was imported instead of the standard library" not in run.stdout + run.stderr
    assert run.returncode == 0, run.stderr
    for step in run.result["steps"]:
        assert step["status"] == "ok", step["error"]
        assert step["variants"][0]["status"] == "ok", step["variants"][0]["error"]


def older_pythons() -> list[str]:
    found = []
    for version in ("3.8", "3.9", "3.10"):
        candidates = [shutil.which(f"python{version}")]
        candidates += sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python"))
        for candidate in filter(None, candidates):
            done = subprocess.run([str(candidate), "-V"], capture_output=True, check=False)
            if done.returncode == 0:
                found.append(str(candidate))
                break
    return found


@pytest.mark.parametrize("python", older_pythons() or ["none"])
def test_the_bootstrap_runs_under_older_pythons_in_a_shadowing_repo(
    python: str, shadowing_repo: Path
) -> None:
    """`--python` may be a 3.8/3.9 venv holding an old torch: the bootstrap and every child
    module must load there (this interpreter has no torch: the probe says exactly that)."""
    if python == "none":
        pytest.skip("OLDER PYTHONS NOT TESTED: no python3.8/3.9/3.10 on this machine")
    launcher = ChildLauncher(python=python)
    outcome = launcher.run(
        ChildSpec(kind="probe", repo_root=str(shadowing_repo)), label="probe", timeout_s=120
    )
    assert outcome.cause is None, outcome.output_tail
    assert outcome.report is not None
    if outcome.report.status == "ok":
        return  # that interpreter has torch
    assert "No module named 'torch'" in (outcome.report.error or ""), outcome.report
