"""A step whose worker double-forks short CPU burners, the middle process exiting first:
each burner is an orphan, re-parented away from the worker, and burns BURN_S CPU seconds
before it exits. Counting only the live process group and the children its members waited
for, such a child escaped its CPU budget (issue 51, finding 8). make_step starts two such
workers and never returns: the budget must stop it.

Each burner adds the CPU seconds it used to `burned.log` in the working directory (the
repository, for a measuring child), so a test can say how much CPU the child really took.
Run as a script, it is the worker alone.
"""

import os
import subprocess
import sys
import time

BURN_S = 0.3
WORKERS = 2
LEDGER = "burned.log"


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def work(ledger: str) -> None:
    """Start burners one after another, forever: fork a middle process that forks the burner
    and exits at once; wait for the middle, then for the burner's end (its pipe's EOF)."""
    while True:
        done_r, done_w = os.pipe()
        middle = os.fork()
        if middle == 0:
            if os.fork() == 0:
                os.close(done_r)
                burn(BURN_S)
                with open(ledger, "a", encoding="ascii") as out:
                    out.write(f"{time.process_time():.3f}\n")
                os._exit(0)
            os._exit(0)
        os.close(done_w)
        os.waitpid(middle, 0)
        os.read(done_r, 1)  # b"" once the burner has exited
        os.close(done_r)


def make_step(device="cpu"):
    """Two workers (two cores' worth of burners, so that a loaded machine still lets the
    budget's CPU seconds pass well before its wall cap), waited for."""
    argv = [sys.executable, __file__, os.path.abspath(LEDGER)]
    workers = [subprocess.Popen(argv) for _ in range(WORKERS)]
    for worker in workers:
        worker.wait()
    raise RuntimeError("the workers ended: they should have been stopped by the CPU budget")


if __name__ == "__main__":
    work(sys.argv[1])
