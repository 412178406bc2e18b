"""Day one, as a user has it: the wheel the project builds, installed into a fresh venv
outside the repository (no system site packages, no torch), then `compilegate init` and
`compilegate run` on a step in a repository of the user's own.

The fresh venv holds compilegate and its dependencies only (from pip's cache or PyPI):
torch comes from the measuring interpreter given with `--python`, as the README's install
section says, so the test does not install torch a second time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, TINY_STEP_SOURCE, TORCH_PYTHON

# What a wheel needs of the source tree (pyproject.toml names the rest).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "runner", "schemas")
# Appended to what init wrote, to measure in seconds: the eager backend (no Inductor compile,
# which takes minutes on a loaded 2-core runner), one process each, no numerics.
QUICK = (
    "    warmup: 1\n    iterations: 4\n    rounds: 2\n    variant_processes: 1\n"
    "    numerics: {enabled: false}\n"
)


def sh(argv: list[str], cwd: Path, timeout_s: float = 600) -> subprocess.CompletedProcess:
    # No PYTHONPATH, nothing of the checkout: the installed package alone.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def build_wheel(tmp: Path) -> Path:
    """`pip wheel --no-deps` of a copy of the source tree (the checkout gets no build/)."""
    source = tmp / "source"
    for name in WHEEL_SOURCES:
        origin = REPO_ROOT / name
        if origin.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(origin, source / name, ignore=ignore)
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(origin, source / name)
    # The build needs setuptools>=64: this interpreter's when it has one (offline), else
    # pip fetches it into an isolated build environment.
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", tmp / "dist"]
    done = sh([*argv, source], cwd=tmp)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("compilegate-*.whl")
    return wheel


def test_the_built_wheel_installs_into_a_fresh_venv_and_inits_and_runs_a_step(tmp_path):
    if sh([TORCH_PYTHON, "-c", "import torch"], cwd=tmp_path).returncode != 0:
        pytest.skip(f"TORCH NOT TESTED: {TORCH_PYTHON} cannot import torch")
    started = time.perf_counter()
    wheel = build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    assert "compilegate/cli/init_command.py" in names and "compilegate/child/main.py" in names
    for schema in ("config", "result", "baseline"):
        assert (
            f"compilegate-0.1.0.data/data/share/compilegate/schemas/{schema}.schema.json" in names
        )

    venv = tmp_path / "venv"
    done = sh([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = sh([venv / "bin/python", "-m", "pip", "install", "-q", wheel], cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # The fresh venv has no torch: init and run measure with the interpreter --python names.
    assert sh([venv / "bin/python", "-c", "import torch"], cwd=tmp_path).returncode != 0
    installed_s = time.perf_counter() - started

    repo = tmp_path / "user-repo"
    (repo / "train").mkdir(parents=True)
    (repo / "train/step.py").write_text(TINY_STEP_SOURCE)
    compilegate = venv / "bin/compilegate"
    init = sh([compilegate, "init", "train/step.py:make_step", "--python", TORCH_PYTHON], cwd=repo)
    assert init.returncode == 0, init.stderr
    assert init.stdout.splitlines()[-1] == f"next: compilegate run --python {TORCH_PYTHON}"
    config = repo / "compilegate.yml"
    text = config.read_text()
    # An installed package's schema lies in one machine's virtual environment: the config,
    # which the user commits, names the schema's published address instead (init_command).
    schema = text.splitlines()[0].split("$schema=", 1)[1]
    published = json.loads((REPO_ROOT / "schemas" / "config.schema.json").read_text())["$id"]
    assert schema == published, schema
    assert "threads: 1" in text or "device: cuda" in text

    config.write_text(text.replace("- {mode: default}", "- {backend: eager}") + QUICK)
    run = sh([compilegate, "run", "--python", TORCH_PYTHON], cwd=repo)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # Without --out the result goes outside the repository (results/location.py).
    (written,) = [
        line.removeprefix("result written to ")
        for line in run.stdout.splitlines()
        if line.startswith("result written to ")
    ]
    assert not Path(written).is_relative_to(repo), written
    document = json.loads(Path(written).read_text())
    (step,) = document["steps"]
    assert (step["name"], step["status"], step["entry"]) == (
        "step",
        "ok",
        "train/step.py:make_step",
    )
    assert [v["status"] for v in step["variants"]] == ["ok"]
    if step["device"] == "cpu":
        assert step["settings"]["threads"] == 1
    # The installed schemas check the document the installed run wrote.
    check = (
        "import json, sys; from compilegate.schemas import validation_errors; "
        "print(json.dumps(validation_errors(json.load(open(sys.argv[1])), 'result')))"
    )
    done = sh([venv / "bin/python", "-c", check, written], cwd=repo)
    assert done.returncode == 0 and json.loads(done.stdout) == [], done.stdout + done.stderr
    sys.stderr.write(
        f"\n[install test: wheel built and installed in {installed_s:.0f} s, "
        f"{time.perf_counter() - started:.0f} s in all]\n"
    )
