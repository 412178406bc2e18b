"""Issue 29 item 7 through the real CLI: what a step leaves running is found by the runner's
end-of-job cleanup. A step (examples/test_steps/leaves_a_grandchild.py) starts a grandchild in
its own session, which outlives its child's process group; the runner (actions/runner's job
cleanup) kills every process whose environment holds the job's RUNNER_TRACKING_ID, and that
cleanup is replayed here on /proc."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from cli_helpers import QUICK_STEP_SETTINGS as QUICK
from cli_helpers import REPO_ROOT, run_cli, write_config

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").is_file(), reason="needs /proc")


def environ_of(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def runner_cleanup(tracking_id: str) -> list[int]:
    """What the runner does when the job ends: kill each process carrying its tracking id."""
    killed = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            if environ_of(int(entry.name)).get("RUNNER_TRACKING_ID") == tracking_id:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
    return killed


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_grandchild_left_behind_carries_the_tracking_id_and_is_cleaned_up(
    tmp_path: Path,
) -> None:
    tracking_id = f"github_{uuid.uuid4()}"
    pid_file = tmp_path / "grandchild.pid"
    config = write_config(
        tmp_path / "c.yml",
        "  - name: leaves\n    entry: examples/test_steps/leaves_a_grandchild.py:make_step\n"
        "    env: [COMPILEGATE_TEST_GRANDCHILD_PID_FILE]\n" + QUICK,
    )
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out",
        str(tmp_path / "r.json"),
        env={"RUNNER_TRACKING_ID": tracking_id,
             "COMPILEGATE_TEST_GRANDCHILD_PID_FILE": str(pid_file)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    grandchild = int(pid_file.read_text())
    try:
        assert alive(grandchild), "the step's grandchild should outlive compilegate"
        assert environ_of(grandchild).get("RUNNER_TRACKING_ID") == tracking_id
        assert grandchild in runner_cleanup(tracking_id)
        deadline = time.monotonic() + 10
        while alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(grandchild)
    finally:
        if alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)
