"""A live child's CPU, read from /proc while it runs (the rest of compile cost is tested in
tests/unit/child/test_compile_cost.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compilegate.child.compile_cost import tree_cpu_s


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_live_childs_cpu_is_counted_before_it_exits_which_rusage_children_misses() -> None:
    """What RUSAGE_CHILDREN misses: a worker that burnt CPU and is still alive."""
    import resource

    burn = "import time\nt=time.process_time()\nwhile time.process_time()-t<0.6: pass\n"
    burn += "import sys\nsys.stdout.write('done\\n'); sys.stdout.flush()\ntime.sleep(30)\n"
    start_tree = tree_cpu_s()
    start_reaped = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    child = subprocess.Popen(
        [sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True
    )  # a live "worker"
    try:
        assert child.stdout is not None and child.stdout.readline() == "done\n"
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - start_reaped
        live = tree_cpu_s() - start_tree
        assert reaped == 0.0
        assert live >= 0.5
    finally:
        child.kill()
        child.wait()
    # reaped now: counted once, through RUSAGE_CHILDREN
    assert tree_cpu_s() - start_tree >= 0.5
