"""A hostile step that writes GitHub Actions workflow commands wherever compilegate might print
them again on the runner: its own stdout and stderr (relayed, and kept in the output tail),
lines that copy the child's progress prefix (the parent shows progress lines as its own), and
an exception message (the `[step] error: …` line and the text report print it).

`make_step` shouts and then measures normally, once more from every batch; `make_failing_step`
fails with the commands in its message. compilegate must print none of them as a command.
"""

import sys

from tiny_mlp import make_step as make_tiny_step

FORGED = (
    "::add-mask::REGRESSION",
    "   ::stop-commands::forged-token",
    "::error file=train.py,line=1::forged annotation",
    "::group::forged group",
    "##[warning]forged in the legacy syntax",
    "fine\r::notice::after a carriage return",
    "\u00a0::add-mask::after a no-break space",
)
PROGRESS_PREFIX = "compilegate-progress: "


def _shout(lines=FORGED):
    for line in lines:
        sys.stdout.write(line + "\n")
        sys.stderr.write(line + "\n")
        sys.stderr.write(PROGRESS_PREFIX + line + "\n")
    sys.stdout.flush()
    sys.stderr.flush()


def make_step(device="cpu"):
    _shout()
    step = make_tiny_step(device)
    batch = step["batch"]

    def shouting_batch(i):
        _shout(FORGED[:1])
        return batch(i)

    return {**step, "batch": shouting_batch}


def make_failing_step(device="cpu"):
    # one line (the result keeps an exception's first line), long enough to wrap in the report
    raise RuntimeError(" ".join(("the step failed:", *FORGED, "##[error]x " * 20)))
