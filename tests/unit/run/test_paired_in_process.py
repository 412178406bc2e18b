"""Paired in-process (run/step_measurement.py with run/child_runs.py): base and head timed in
one child per process, each side's part read as a report of its own, with stand-in children."""

from __future__ import annotations

import io
from pathlib import Path

from test_orchestrate import CONFIG, StandInLauncher
from test_result import child_output, timed

from compilegate.child.protocol import ChildReport, ChildSpec
from compilegate.config.loading import load_config_file
from compilegate.report.child_failure_words import said_error
from compilegate.run.child_process import ChildOutcome
from compilegate.run.orchestrate import RunSide, run_sides
from compilegate.schemas import validation_errors


class PairLauncher(StandInLauncher):
    """Answers a `pair` child with each side's part (`drop`: a side it leaves out)."""

    def __init__(self, drop: str | None = None) -> None:
        super().__init__()
        self.drop, self.pairs = drop, 0

    def run(self, spec: ChildSpec, *, label: str, timeout_s: float, env_opt_in=(), cache_dir=None):
        if spec.kind != "pair":
            return super().run(spec, label=label, timeout_s=timeout_s, cache_dir=cache_dir)
        self.pairs += 1
        sides = {}
        for side in spec.sides:
            if side.role == self.drop:
                continue
            if side.variant is None:
                timing = {"eager": timed(10, seed=self.pairs), "eager_b": timed(10, seed=9)}
                sides[side.role] = {
                    "eager": {"warmup_s": [0.1], "peak_bytes": None, "timed": timing}
                }
            else:
                sides[side.role] = {"variant": child_output(10.0, 5.0)["variant"]}
        report = {"status": "ok", "device": "cpu", "sides": sides}
        return ChildOutcome(ChildReport.from_json(report), None)


def run_pair(tmp_path: Path, launcher: PairLauncher) -> list[dict]:
    (tmp_path / "step.py").write_text("def make_step(device='cpu'):\n    pass\n")
    config_text = CONFIG.replace(
        "eager_processes: 1", "eager_processes: 2\n    variant_processes: 3"
    )
    (tmp_path / "compilegate.yml").write_text(config_text)
    config = load_config_file(tmp_path / "compilegate.yml")
    sides = [
        RunSide(config, launcher, tmp_path / f"{role}.json", role) for role in ("base", "head")
    ]
    run_sides(sides, io.StringIO(), in_process=True)
    return [side.document for side in sides]


def test_each_side_keeps_its_own_processes_and_the_head_its_ratio_to_the_base(
    tmp_path: Path,
) -> None:
    launcher = PairLauncher()
    base, head = run_pair(tmp_path, launcher)
    assert launcher.pairs == 2 * 2 + 4 * 2  # eager 2 per step; 2 warm timing processes a variant
    for document in (base, head):
        assert validation_errors(document, "result") == []
        step = document["steps"][0]
        assert step["status"] == "ok" and len(step["eager"]["processes"]) == 2
        assert all(len(v["processes"]) == 3 for v in step["variants"])
    head_step, base_step = head["steps"][0], base["steps"][0]
    assert all("head_vs_base" in p for p in head_step["eager"]["processes"])
    assert not any("head_vs_base" in p for p in base_step["eager"]["processes"])
    warm = head_step["variants"][0]["processes"][1:]
    assert all("head_vs_base" in p and p["compile_wall_s"] is None for p in warm)


def test_a_pair_child_that_leaves_a_side_out_fails_the_step_on_both_sides(tmp_path: Path) -> None:
    base, head = run_pair(tmp_path, PairLauncher(drop="base"))
    for document in (base, head):
        step = document["steps"][0]
        assert step["status"] == "error"
        assert said_error(step) == "eager: the paired child did not return both sides"
