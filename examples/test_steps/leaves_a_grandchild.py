"""A step that leaves a process behind: a grandchild in its own session (`setsid`), which
outlives the measuring child and its process group. Its pid is written to the file named by
GRANDCHILD_PID_FILE. Only the runner's end-of-job cleanup, which kills every process that
carries the job's RUNNER_TRACKING_ID, can find it — if compilegate let it keep that variable.
"""

import os
import subprocess
import sys

from tiny_mlp import make_step as make_tiny_step

PID_FILE = "COMPILEGATE_TEST_GRANDCHILD_PID_FILE"


def make_step(device="cpu"):
    path = os.environ.get(PID_FILE)
    if path and not os.path.exists(path):
        grandchild = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(300)"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(path, "w", encoding="utf-8") as out:
            out.write(str(grandchild.pid))
    return make_tiny_step(device)
