"""Which processes are ours, with a real child (the GPU sampling itself is tested in
tests/unit/run/test_gpu_state.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from compilegate.run.gpu_state import own_pids


def test_own_pids_are_this_process_and_its_descendants() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        ours = own_pids()
        assert os.getpid() in ours and child.pid in ours and 1 not in ours
    finally:
        child.kill()
        child.wait()
