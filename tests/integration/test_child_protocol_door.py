"""The child's door in a real interpreter: a spec it cannot read is exit 2 and one line
(the spec itself is tested in tests/unit/run/test_child_protocol.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repo_helpers import RUNNER


def test_the_child_refuses_a_spec_it_cannot_read_at_its_door(tmp_path: Path) -> None:
    """Exit code 2 and the reason as its last line: the launcher reports both."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"kind": "eager", "out": str(tmp_path / "o"), "extra": 1}))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from compilegate.child.main import main; import sys; main(sys.argv[1])",
            str(path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(RUNNER)},
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "compilegate child: child spec: unknown key extra"
    )
    assert not (tmp_path / "o").exists()
