"""User code that changes torch's global state: recorded, and kept away from the yardstick
(child/torch_state.py). The issue's case: a factory calling torch.set_num_threads(1) slowed
the yardstick 0.28 → 0.35 ms, and a +20 % step regression passed in yardstick units."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, run_cli, write_config

torch = pytest.importorskip("torch")

ENTRY = "examples/test_steps/sets_one_thread.py:make_step"
SETTINGS = {
    "warmup": 1,
    "iterations": 4,
    "rounds": 2,
    "seed": 0,
    "amp": None,
    "threads": 2,
    "numerics": {"enabled": False},
}


def test_the_yardstick_runs_with_the_threads_from_before_the_factory(monkeypatch) -> None:
    """In process, the child's own functions: every yardstick iteration sees 2 threads,
    every step iteration the factory's 1."""
    from compilegate.child import timing
    from compilegate.child.measure import StepBuilder, measure_eager
    from compilegate.run.entry_check import resolve_entry

    saved = torch.get_num_threads()
    seen: list[int] = []
    real = timing.Yardstick.__call__

    def spy(self, index: int) -> None:
        seen.append(torch.get_num_threads())
        real(self, index)

    monkeypatch.setattr(timing.Yardstick, "__call__", spy)
    try:
        torch.set_num_threads(2)
        entry = resolve_entry(ENTRY, REPO_ROOT, "test")
        builder = StepBuilder(entry, REPO_ROOT, "cpu", 0)
        measured = measure_eager(builder, SETTINGS, lambda phase, message: None)
        assert torch.get_num_threads() == 1  # the user's setting stays for the step
    finally:
        torch.set_num_threads(saved)
    assert seen == [2] * SETTINGS["iterations"]
    assert measured["torch_state"]["changed"] == {"num_threads": {"before": 2, "after": 1}}


def test_the_result_names_what_the_factory_changed(tmp_path: Path) -> None:
    """Through the real runner (backend eager: no Inductor compile)."""
    config = write_config(
        tmp_path / "compilegate.yml",
        f"  - name: one_thread\n    entry: {ENTRY}\n    threads: 2\n"
        "    variants: [{backend: eager}]\n    warmup: 1\n    iterations: 4\n    rounds: 2\n"
        "    variant_processes: 1\n    numerics: {enabled: false}\n",
    )
    out = tmp_path / "result.json"
    run = run_cli("run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(out))
    assert run.returncode == 0, run.stderr[-2000:]
    step = run.result["steps"][0]
    expected = {"num_threads": {"before": 2, "after": 1}}
    assert step["eager"]["torch_state"]["changed"] == expected
    assert step["variants"][0]["torch_state"]["changed"] == expected
