"""The CPU seconds of a measuring child and every process it started, exited or not.

child_budget.group_cpu_s reads the child's process group from /proc: each live member's own
seconds and those of the children it waited for (cutime, cstime). A process whose parent
exits before it does is re-parented to init, which reaps it and keeps its seconds: a step
whose workers fork short CPU burners through a middle process that exits first (a double
fork) escaped the budget. With `timeout_s: 5` such a child was stopped at the wall cap,
20 s, having used ~8.2 CPU-s (issue 51, finding 8).

So the process that owns the budget makes itself a *child subreaper* (Linux's
`prctl(PR_SET_CHILD_SUBREAPER)`, since 3.4, no privilege needed): an orphaned descendant
is re-parented to it instead of init. When one exits it stays a zombie, still in the
child's process group with its seconds in /proc, until the next reading here counts it and
reaps it (`os.wait4`: its own seconds and those of the children it waited for) and keeps
the sum. A reading is then every descendant's CPU that stayed in the group: live members,
exited ones their parents waited for, and exited orphans. What leaves the group
(`setsid`) is not counted, as before.

Why not a cgroup: a cgroup v2 for the child's processes would count them without reaping,
but needs a writable, delegated cgroup tree. The machine this was built on has none
(`/sys/fs/cgroup` is a read-only cgroup v1 hierarchy, as in many containers and on a
self-hosted runner without systemd), while the subreaper works for any user on any Linux.
A container child (containers/child_launcher.py) is counted by the engine from its own
cgroup, exited processes included.

Only zombies this process adopted, in the child's group, other than the child itself (its
Popen reaps it), are reaped here: never a pid another part of compilegate waits for.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
PROC = Path("/proc")
REAP_AFTER_KILL_S = 2.0  # how long the killed group's adopted members are waited for

COUNTED_WITH_SUBREAPER = "child_subreaper"  # codes: a failure records them (report/ words them)
COUNTED_LIVE_GROUP = "live_process_group"


@functools.cache
def become_subreaper() -> bool:
    """Make this process a child subreaper (once); whether it is one. False off Linux or
    where prctl is refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def counting() -> str:
    """How a child's CPU seconds are counted in this process: with a child subreaper (every
    descendant, exited or not) or the live process group only."""
    return COUNTED_WITH_SUBREAPER if become_subreaper() else COUNTED_LIVE_GROUP


@dataclass(frozen=True)
class GroupMember:
    """One process of a group, as /proc/<pid>/stat says: its CPU in clock ticks (its own
    and that of the children it waited for)."""

    pid: int
    ppid: int
    state: str
    jiffies: int


@dataclass
class DescendantCpu:
    """The CPU seconds of process group `pgid` (led by the child, pid `pgid`), with the
    exited orphans this process reaped from it (`reaped_s`)."""

    pgid: int
    proc: Path = PROC
    reaped_s: float = 0.0

    def read_s(self) -> float | None:
        """CPU seconds so far: the live group's (and what its members waited for), plus
        every exited orphan of the group reaped here. None where /proc cannot be read."""
        members = group_members(self.pgid, self.proc)
        if members is None:
            return None
        jiffies = 0
        for member in members:
            if member.state == "Z" and self._reap(member):
                continue  # its seconds are in reaped_s now
            jiffies += member.jiffies
        tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        return jiffies / tick + self.reaped_s

    def reap_after_kill(self, *, wait_s: float = REAP_AFTER_KILL_S) -> None:
        """After the group was killed: reap the members this process adopted, so that no
        zombie of a finished child stays behind (waits at most `wait_s`)."""
        deadline = time.monotonic() + wait_s
        while True:
            members = group_members(self.pgid, self.proc) or []
            adopted = [m for m in members if self._adopted(m)]
            for member in adopted:
                if member.state == "Z":
                    self._reap(member)
            if not adopted or time.monotonic() >= deadline:
                return
            time.sleep(0.02)

    def _adopted(self, member: GroupMember) -> bool:
        return member.ppid == os.getpid() and member.pid != self.pgid

    def _reap(self, member: GroupMember) -> bool:
        """Reap `member` if it is an exited orphan this process adopted; whether it was."""
        if not self._adopted(member):
            return False
        try:
            pid, _, usage = os.wait4(member.pid, os.WNOHANG)
        except ChildProcessError:  # not ours after all (reaped meanwhile)
            return False
        if pid != member.pid:
            return False
        self.reaped_s += usage.ru_utime + usage.ru_stime
        return True


def group_members(pgid: int, proc: Path) -> list[GroupMember] | None:
    """Every process of group `pgid` in /proc (zombies included), or None where /proc
    cannot be read."""
    try:
        entries = list(proc.iterdir())
    except OSError:
        return None
    members = []
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:  # gone since the listing, or not ours to read
            continue
        # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
        # utime stime cutime cstime ...: comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 15 or fields[2] != str(pgid):
            continue
        try:
            jiffies = sum(int(x) for x in fields[11:15])
            members.append(GroupMember(int(entry.name), int(fields[1]), fields[0], jiffies))
        except ValueError:
            continue
    return members
