"""An output folder a non-root run made unreadable, in a real process as that user (the rest
of the output bounds are tested in tests/unit/config/test_output_bounds.py)."""

from __future__ import annotations

import json
import sys

from repo_helpers import RUNNER
from unprivileged import as_unprivileged, unprivileged_folder

# A run on a non-root runner writes 2 MiB under a folder it then makes unreadable (mode 000,
# or readable without search permission): its size cannot be known, so it is over the limit,
# never skipped (issue 29, finding 5; root reads through any mode: run as a non-root user).
HIDE_OUTPUT = """
import json, os, sys
from pathlib import Path
from compilegate.config.limits import ResourceLimits
from compilegate.containers.limits import output_over
out = Path(sys.argv[1]) / "out"
got = {}
for name, mode in (("locked", 0), ("listonly", 0o400), ("itself", None)):
    folder = out / name
    folder.mkdir(parents=True)
    (folder / "blob").write_bytes(b"x" * (2 << 20))
    target = out if mode is None else folder
    os.chmod(target, 0 if mode is None else mode)
    got[name] = output_over(out, ResourceLimits(output_mib=1))
    os.chmod(target, 0o700)
    (folder / "blob").unlink()
    folder.rmdir()
print(json.dumps(got))
"""


def test_an_output_folder_the_run_made_unreadable_is_over_its_limit() -> None:
    with unprivileged_folder() as work:
        done = as_unprivileged(
            [sys.executable, "-c", HIDE_OUTPUT, str(work)], env={"PYTHONPATH": str(RUNNER)}
        )
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    over = "output folder over its limit of 1 MiB (limits.output_mib): "
    assert got == {
        "locked": over + "locked unreadable (Permission denied)",
        "listonly": over + "listonly/blob unreadable (Permission denied)",
        "itself": over + "the folder itself unreadable (Permission denied)",
    }
