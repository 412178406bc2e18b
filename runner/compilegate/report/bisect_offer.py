"""The comment's offer to find the commit: when a count regresses on a pull request of more
than one commit, the details say the one `compilegate bisect` command that names the commit
at which it moved (issue 55). Offered, never run: the user decides.

Counts only (step work, compile work, graph breaks, recompiles, numerics): they are exact
from one run, so a bisection needs no timing; a slower step is not offered (its time is
not bisected).
"""

from __future__ import annotations

import re
import shlex

from ..gate.verdict import Verdict, VerdictReport
from .links import LinkContext

# The gate's count metrics, and the name `bisect --count` follows each by (None: every
# count of the family that moved).
COUNT_METRICS = {
    "step_work": None,
    "compile_work": None,
    "graph_break_sites": "graph_breaks",
    "recompiles": "recompiles",
    "numerics": "numerics",
}
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def bisect_offer(verdict: VerdictReport, links: LinkContext, config: str) -> str | None:
    """The offer's markdown, or None: no count regressed, or the pull request has one
    commit (that commit is the answer), or its commits are not known."""
    regressed = [
        row
        for row in verdict.verdicts
        if row.metric in COUNT_METRICS and row.verdict is Verdict.REGRESSION
    ]
    commits, base, head = links.pr_commits, links.base_sha, links.head_sha
    if not regressed or commits is None or commits < 2 or base is None or head is None:
        return None
    if not (_SHA.match(base) and _SHA.match(head)):
        return None
    steps = sorted({row.step for row in regressed})
    command = ["compilegate", "bisect", "--config", config, "--bad", head]
    for step in steps:
        command += ["--step", step]
    names = [COUNT_METRICS[row.metric] for row in regressed]
    if None not in names:
        for name in sorted({n for n in names if n is not None}):
            command += ["--count", name]
    good = f'--good "$(git merge-base {base} {head})"'
    line = shlex.join(command[:2]) + f" {good} " + shlex.join(command[2:])
    return (
        f"A count moved in this pull request's {commits} commits. To find the commit that "
        "moved it (one untimed counting pass per probed commit, about "
        f"{_probes(commits)} of them; not run for you):\n\n```sh\n{line}\n```"
    )


def _probes(commits: int) -> int:
    """Probes a bisection of `commits` commits after the base needs: both ends, then
    a binary search."""
    return 2 + max(commits - 1, 1).bit_length()
