"""`compilegate run` on the host as a non-root user: what a step hides behind mode 000 in the
child's folder does not outlive the run (issue 29, finding 5).

The step (examples/test_steps/hides_output.py) writes 20 MiB in its HOME, the launcher's
fresh folder in the temp folder, and makes the folder mode 000. Before the fix the
launcher's `rmtree(ignore_errors=True)` could not list it as a non-root user and left it in
the temp folder, silently, run after run. The host backend is for trusted code and has no
output limit: the run passes; the temp folder is empty afterwards.
"""

from __future__ import annotations

import json
import os
import stat

from cli_helpers import QUICK_STEP_SETTINGS, REPO_ROOT

from unprivileged import (
    UNPRIVILEGED_UID,
    as_unprivileged,
    nonroot_python,
    runs_as_root,
    unprivileged_folder,
)


def test_a_folder_a_step_hid_behind_mode_000_is_removed_with_the_childs_folder() -> None:
    with unprivileged_folder() as work:
        tmp = work / "tmp"
        tmp.mkdir()
        config = work / "compilegate.yml"
        config.write_text(
            "version: 1\nsteps:\n  - name: hides\n"
            f"    entry: {REPO_ROOT}/examples/test_steps/hides_output.py:make_step\n"
            "    device: cpu\n    threads: 1\n" + QUICK_STEP_SETTINGS
        )
        if runs_as_root():
            for path in (tmp, config):
                os.chown(path, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
            "TMPDIR": str(tmp), "PYTHONPATH": str(REPO_ROOT / "runner"), "LANG": "C.UTF-8",
        }  # fmt: skip
        out = work / "result.json"
        python = nonroot_python(env, cwd=work, imports="compilegate.cli, yaml, torch")
        command = [
            python, "-m", "compilegate", "run", "--config", str(config),
            "--repo", str(REPO_ROOT), "--out", str(out),
        ]  # fmt: skip
        done = as_unprivileged(command, env=env, cwd=work, timeout_s=900)
        output = done.stdout + done.stderr
        left = sorted(os.listdir(tmp))
        modes = {name: stat.filemode(os.lstat(tmp / name).st_mode) for name in left}
        assert done.returncode == 0, output[-3000:]
        step = json.loads(out.read_text())["steps"][0]
        assert step.get("error") is None, step.get("error")
        assert left == [], modes  # the child's folder and the 20 MiB hidden in it are gone
        assert "could not remove" not in output
