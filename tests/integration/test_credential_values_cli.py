"""`compilegate run` refuses a credential before measuring: exit 2, one line, the value never
printed (the checks themselves are tested in tests/unit/config/test_credential_values.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_credential_values import CREDENTIALS, JWT

from repo_helpers import REPO_ROOT


def test_run_refuses_before_measuring_with_one_line_and_exit_2(tmp_path):
    config = tmp_path / "compilegate.yml"
    config.write_text(
        "version: 1\nsteps:\n  - name: s\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        "    env: [PIP_INDEX_URL]\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"),
           "PIP_INDEX_URL": CREDENTIALS["PIP_INDEX_URL"]}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "run", "--config", str(config),
         "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "PIP_INDEX_URL is never passed" in done.stderr
    assert "s3cret" not in done.stderr and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("opted", "host", "named"),
    [
        ("CI_JOB_JWT", {"CI_JOB_JWT": JWT}, "CI_JOB_JWT is never passed"),
        ("SERVICE_PEM", {"SERVICE_PEM": "/etc/svc.pem"}, "SERVICE_PEM is never passed"),
        ("BUILD_INFO", {"BUILD_INFO": JWT}, "BUILD_INFO is never passed"),
    ],
)
def test_a_pull_requests_config_opting_in_a_credential_is_refused_with_exit_2(
    tmp_path, opted, host, named
):
    config = tmp_path / "compilegate.yml"
    config.write_text(
        "version: 1\nsteps:\n  - name: s\n    entry: examples/test_steps/tiny_mlp.py:make_step\n"
        f"    env: [{opted}]\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "compilegate", "run", "--config", str(config),
         "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **host},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and named in done.stderr, done.stderr
    assert JWT not in done.stderr and not (tmp_path / "r.json").exists()
