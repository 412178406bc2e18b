"""Two real PyTorch versions side by side on this machine (`matrix --paired`'s engine): the
versions' processes alternate, each version is recorded with its own torch, and the later
one is judged against the first on paired differences, in raw milliseconds (the yardstick
is a torch workload: no fixed unit across versions)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from cli_helpers import OLD_TORCH_PYTHON, QUICK_STEP_SETTINGS, REPO_ROOT, TORCH_PYTHON, write_config

from compilegate.config.loading import load_config_file
from compilegate.gate.compare import compare_to_baseline
from compilegate.report.note_words import paired_summary
from compilegate.report.row_words import row_message
from compilegate.results.model import parse
from compilegate.run.launcher import ChildLauncher
from compilegate.run.paired import run_versions_paired

pytestmark = [pytest.mark.compile, pytest.mark.old_torch]


def test_two_torch_versions_alternate_and_are_judged_paired(tmp_path: Path) -> None:
    if not Path(OLD_TORCH_PYTHON).exists():
        pytest.skip(f"OLD TORCH NOT TESTED: no interpreter at {OLD_TORCH_PYTHON}")
    config_path = write_config(
        tmp_path / "compilegate.yml",
        "  - name: tiny\n    entry: examples/test_steps/tiny_mlp.py:make_step\n    device: cpu\n"
        + QUICK_STEP_SETTINGS
        + "    variant_processes: 3\n",  # pairs: MIN_PAIRS (3) decide the paired noise
    )
    config = load_config_file(config_path, repo_root=REPO_ROOT)
    stream = io.StringIO()
    launchers = [
        ("current", ChildLauncher(python=TORCH_PYTHON, stream=stream)),
        ("2.4.1", ChildLauncher(python=OLD_TORCH_PYTHON, stream=stream)),
    ]
    out = [tmp_path / "current.json", tmp_path / "old.json"]
    base, head = run_versions_paired(config, launchers, out, stream)
    assert base["environment"]["torch"] != head["environment"]["torch"]
    assert head["environment"]["torch"].startswith("2.4.1")
    for document in (base, head):
        step = document["steps"][0]
        assert step["status"] == "ok", step["error"]
        assert len(step["variants"][0]["processes"]) == 3
    order = [line for line in stream.getvalue().splitlines() if line.startswith("[tiny ·")]
    assert [line.split("·")[1].split("]")[0].strip() for line in order][:4] == [
        "torch current", "torch 2.4.1", "torch 2.4.1", "torch current",
    ]  # fmt: skip
    report = compare_to_baseline(parse(base, "base", "baseline"), parse(head, "head", "result"))
    assert report.paired is not None
    assert paired_summary(report.paired) == "paired, 3 pairs, same machine"
    compiled = report.rows(metric="compiled_step_ms")[0]
    assert compiled.normalisation == "raw" and "pairs of processes" in row_message(compiled)
    work = report.rows(metric="compile_work")
    assert not work or not work[0].gated, "counts across versions are shown, not gated"
