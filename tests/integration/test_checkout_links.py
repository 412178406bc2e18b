"""A pull request's symbolic links do not steer what the host reads (checkout_files.py): the
real CLI on a real git repository.

- `compilegate.yml -> ci/gate.yml` with the pull request's loose policy in ci/gate.yml: the
  base's policy is at compilegate.yml; paired mode used to look for ci/gate.yml in the base,
  find none and pass every step as `new` (exit 0).
- a base commit without the config the head names: nothing to take the policy from (exit 4).
- `compilegate.yml -> /dev/zero`: the host read without end; now one line, fast, in bounded
  memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import QUICK_STEP_SETTINGS, REPO_ROOT

from repo_helpers import git

BASE_POLICY = (
    "version: 1\nsteps:\n  - name: tiny\n    entry: tiny_mlp.py:make_step\n    device: cpu\n"
    + QUICK_STEP_SETTINGS
    + "    variant_processes: 2\n    thresholds: {speedup_drop_pct: 5}\n"
)
HEAD_POLICY = BASE_POLICY.replace("variant_processes: 2", "variant_processes: 1").replace(
    "speedup_drop_pct: 5", "speedup_drop_pct: 99"
)
# The parent's address space while it reads a config: it imports no torch before the config
# is read, so 1 GiB is plenty; reading /dev/zero into memory hits it within seconds.
PARENT_MEMORY_BYTES = 1 << 30


def compilegate(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (PARENT_MEMORY_BYTES, PARENT_MEMORY_BYTES))

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")}
    return subprocess.run(
        [sys.executable, "-m", "compilegate", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=timeout, check=False, preexec_fn=limit_memory,
    )  # fmt: skip


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "ci").mkdir(parents=True)
    steps = REPO_ROOT / "examples/test_steps"
    for name in ("tiny_mlp.py", "classification.py"):
        (repo / name).write_text((steps / name).read_text())
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "compilegate.yml").write_text(BASE_POLICY)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: the policy")
    return repo


def test_a_symlinked_head_config_does_not_skip_the_base_policy(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "ci/gate.yml").write_text(HEAD_POLICY)
    (repo / "compilegate.yml").unlink()
    (repo / "compilegate.yml").symlink_to("ci/gate.yml")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head: the config is a link to a looser one")
    out = tmp_path / "out" / "result.json"
    done = compilegate(
        "run", "--config", str(repo / "compilegate.yml"), "--repo", str(repo),
        "--against", "HEAD~1", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "compilegate.yml" in lines[0] and "symbolic link" in lines[0]
    assert "Traceback" not in output and not out.exists()


def test_a_base_without_the_config_is_not_judged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "ci/gate.yml").write_text(HEAD_POLICY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head: a config the base has not")
    out = tmp_path / "out" / "result.json"
    done = compilegate(
        "run", "--config", str(repo / "ci/gate.yml"), "--repo", str(repo),
        "--against", "HEAD~1", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 4, output[-3000:]
    assert "ci/gate.yml" in done.stderr and "Traceback" not in output
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_config_linked_to_dev_zero_is_refused_fast_in_bounded_memory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "compilegate.yml").unlink()
    (repo / "compilegate.yml").symlink_to("/dev/zero")
    started = time.monotonic()
    done = compilegate(
        "run", "--config", str(repo / "compilegate.yml"), "--repo", str(repo),
        "--out", str(tmp_path / "r.json"), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    elapsed_s = time.monotonic() - started
    output = done.stdout + done.stderr
    assert done.returncode == 2, output[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "compilegate.yml" in lines[0], output[-3000:]
    assert "Traceback" not in output and elapsed_s < 30
    # Named directly (outside any repository): a device is not a regular file.
    done = compilegate(
        "run", "--config", "/dev/zero", "--repo", str(repo), cwd=tmp_path, timeout=60
    )
    assert done.returncode == 2 and "regular file" in done.stderr, done.stderr[-2000:]
