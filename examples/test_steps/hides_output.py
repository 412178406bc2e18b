"""A hostile step that leaves more in its output folder than its limit, where a non-root
runner cannot see it (issue 29, finding 5).

It writes 20 MiB under `hidden/` in the run's output folder (/out in a container; on the
host, where there is none, the child's own HOME, in the launcher's temp folder) and makes
that folder mode 000: a walk of the folder by the runner's own user (not root) cannot list
it, so a size check that skipped what it could not read passed it, and a cleanup that
ignored errors left it in the host's temp folder, job after job. Then it is an ordinary
step: the run itself succeeds.
"""

import os

from tiny_mlp import make_step as tiny_step


def make_step(device="cpu"):
    out = "/out" if os.path.isdir("/out") else os.environ["HOME"]
    hidden = os.path.join(out, "hidden")
    try:
        os.mkdir(hidden)
    except FileExistsError:  # an earlier process of the run hid it already
        return tiny_step(device)
    with open(os.path.join(hidden, "blob"), "wb") as blob:
        blob.write(os.urandom(20 << 20))
    os.chmod(hidden, 0)
    return tiny_step(device)
