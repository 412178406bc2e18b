"""`compilegate bisect`: the commit at which a count moved, found with the counting pass alone.

Counts of work (step work, compile work, graph breaks, recompiles, numerics' pass or fail)
are functions of the code, the torch version and the shapes, identical run to run: they need
no timing, so a moved count is bisected over first-parent history with one untimed counting
pass per probed commit (child/measure.py's `counts_only`).

    counts.py    what one commit counted, per step and subject; the values followed
    search.py    the search over the commits (pure: the probe is passed in)
    history.py   the commits between the two ends (git, through run/host_git.py)
    probe.py     one commit measured: a fresh worktree, one counting child per variant
"""
