"""A measuring child's budget (run/child_budget.py): its CPU seconds stop a child that
works too long; a child that only waits (a busy machine, a hang) meets the wall cap alone.
With a fake clock and fake CPU readings; tests/integration/test_child_budget_processes.py runs real
processes."""

from __future__ import annotations

from pathlib import Path

from compilegate.report.child_failure_words import cause_text
from compilegate.run.child_budget import (
    WALL_CAP_FACTOR,
    BudgetPassed,
    ChildBudget,
    group_cpu_s,
    wait_within,
)
from compilegate.run.child_failure import TimedOut, WallCapPassed, budget_cause
from compilegate.run.descendant_cpu import (
    COUNTED_LIVE_GROUP,
    COUNTED_WITH_SUBREAPER,
    DescendantCpu,
)


class FakeChild:
    """A child on a fake clock: `cpu_per_s` CPU seconds per wall second, ending after
    `ends_after_s` wall seconds (never: None)."""

    def __init__(self, cpu_per_s: float, ends_after_s: float | None = None) -> None:
        self.now = 0.0
        self.cpu_per_s, self.ends_after_s = cpu_per_s, ends_after_s

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        if self.ends_after_s is not None and self.now + seconds >= self.ends_after_s:
            self.now = self.ends_after_s
            return True
        self.now += seconds
        return False

    def cpu(self) -> float:
        return self.now * self.cpu_per_s


def budget_error(passed: BudgetPassed, counted: str | None = None) -> str:
    """What a child's error says of the limit it passed (report/child_failure_words.py)."""
    return cause_text(budget_cause(passed, counted))


def wait(child: FakeChild, budget: ChildBudget, cpu=None) -> BudgetPassed | None:
    return wait_within(child.wait, cpu or child.cpu, budget, clock=child.clock)


def test_a_child_burning_cpu_past_its_budget_is_stopped_by_cpu_seconds() -> None:
    child = FakeChild(cpu_per_s=1.0)
    passed = wait(child, ChildBudget.of(10))
    assert passed is not None and passed.limit == "cpu"
    assert budget_error(passed) == "timed out: used 10 CPU-s (timeout_s 10) in 10 s"


def test_a_child_slowed_by_a_busy_machine_runs_past_timeout_s_in_wall_time() -> None:
    # A fifth of a core (load ~10 on 2 cores): 10 CPU-s of work take 50 wall seconds.
    child = FakeChild(cpu_per_s=0.2, ends_after_s=35.0)
    assert wait(child, ChildBudget.of(10)) is None, "done within its CPU seconds: not killed"
    assert child.now == 35.0


def test_a_child_that_only_waits_meets_the_wall_cap_and_no_sooner() -> None:
    child = FakeChild(cpu_per_s=0.01)
    passed = wait(child, ChildBudget.of(10))
    assert passed is not None and passed.limit == "wall"
    assert isinstance(budget_cause(passed), WallCapPassed)
    assert child.now == WALL_CAP_FACTOR * 10
    said = "timed out: wall cap 40 s passed (4 × timeout_s 10; 0 CPU-s used)"
    assert budget_error(passed) == said


def test_a_lower_wall_cap_is_named_without_the_usual_formula() -> None:
    child = FakeChild(cpu_per_s=0.0)
    passed = wait(child, ChildBudget.of(600, wall_cap_s=45))
    assert passed is not None and child.now == 45
    assert budget_error(passed) == "timed out: wall cap 45 s passed (0 CPU-s used)"


def test_without_readable_cpu_time_timeout_s_is_a_wall_clock_limit() -> None:
    child = FakeChild(cpu_per_s=0.0)
    passed = wait(child, ChildBudget.of(10), cpu=lambda: None)
    assert passed is not None and passed.limit == "wall-only" and child.now == 10
    assert isinstance(budget_cause(passed), TimedOut)
    assert budget_error(passed) == (
        "timed out after 10 s (timeout_s, wall clock: CPU time unreadable)"
    )


def test_cpu_seconds_never_go_down_when_a_worker_leaves_the_group() -> None:
    readings = iter([6.0, 9.0, 2.0, 2.0, 11.0])
    child = FakeChild(cpu_per_s=0.0)
    passed = wait(child, ChildBudget.of(10), cpu=lambda: next(readings))
    assert passed is not None and passed.cpu_used_s == 11.0 and child.now == 5


def fake_proc(root: Path, processes: dict[int, tuple[int, list[int]]]) -> Path:
    """A /proc with one stat per pid: (pgrp, [utime, stime, cutime, cstime]) in ticks."""
    for pid, (pgrp, ticks) in processes.items():
        (root / str(pid)).mkdir()
        fields = ["S", "1", str(pgrp), "1", "0", "-1", "0", "0", "0", "0", "0"]
        fields += [str(t) for t in ticks] + ["20", "0", "1"]
        (root / str(pid) / "stat").write_text(f"{pid} (py thon) (x) {' '.join(fields)}\n")
    (root / "self").mkdir()
    return root


def test_the_group_s_cpu_time_counts_the_child_its_workers_and_what_they_waited_for(
    tmp_path: Path,
) -> None:
    import os

    tick = os.sysconf("SC_CLK_TCK")
    proc = fake_proc(
        tmp_path,
        {
            100: (100, [tick, tick, 2 * tick, 0]),  # the child; a reaped worker's 2 s
            101: (100, [3 * tick, 0, 0, tick]),  # a compile worker; the g++ it ran
            200: (200, [50 * tick, 0, 0, 0]),  # another group: not the child's
        },
    )
    assert group_cpu_s(100, proc) == 8.0
    assert group_cpu_s(100, tmp_path / "missing") is None


def test_a_zombie_not_adopted_here_is_counted_from_proc_and_left_alone(tmp_path: Path) -> None:
    """run/descendant_cpu.py: only zombies this process adopted (its children, in the
    child's group) are reaped; any other member, exited or not, counts by its /proc stat."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    proc = fake_proc(tmp_path, {100: (100, [tick, 0, 0, 0]), 101: (100, [2 * tick, 0, 0, 0])})
    stat = proc / "101" / "stat"
    stat.write_text(stat.read_text().replace(") S 1 ", ") Z 1 "))  # exited; its parent: init
    cpu = DescendantCpu(100, proc=proc)
    assert cpu.read_s() == 3.0 and cpu.reaped_s == 0.0
    assert DescendantCpu(100, proc=tmp_path / "missing").read_s() is None


def test_a_cpu_limit_says_how_the_seconds_were_counted() -> None:
    passed = BudgetPassed("cpu", ChildBudget.of(5), 5.2, 11.0)
    assert budget_error(passed, COUNTED_WITH_SUBREAPER) == (
        "timed out: used 5 CPU-s (timeout_s 5) in 11 s "
        "(every descendant counted, exited ones too: child subreaper)"
    )
    assert budget_error(passed, COUNTED_LIVE_GROUP).endswith(
        "(live process group counted: no child subreaper)"
    )
    assert budget_error(passed) == "timed out: used 5 CPU-s (timeout_s 5) in 11 s"
