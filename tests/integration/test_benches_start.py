"""Every bench starts: its imports resolve against the package as it is now. A rename in the
package once left gate_power, paired_power and gpu_check failing on import with nobody told
(issue 39's bench run found it); the benches print figures no test asserts, but they must run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repo_helpers import REPO_ROOT

BENCH = REPO_ROOT / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "bench_common.py")


def test_every_bench_is_listed() -> None:
    assert {"gate_power.py", "paired_power.py", "gpu_check.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_bench_starts(script: Path) -> None:
    """`--help` of a script; a module other benches run (paired_power: gate_power --paired)
    is imported."""
    if '__name__ == "__main__"' not in script.read_text():
        command = ["-c", f"import sys; sys.path.insert(0, 'bench'); import {script.stem}"]
        done = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                              check=False, timeout=120, cwd=BENCH.parent)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout
