"""`compilegate matrix` never judges a partial result of a version whose run errored (killed
at the wall-clock limit, or its compilegate killed): the version is an error row."""

from __future__ import annotations

import json
from pathlib import Path

from gate_docs import result

from compilegate.cli.matrix_command import PARTIAL_NAME, _keep_error
from compilegate.containers.outcome import VersionOutcome
from compilegate.gate.run_set import ResultSource, judge_run_set
from compilegate.results.model import parse


def test_a_partial_result_of_an_errored_version_is_kept_aside_and_the_version_errors(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "torch-2.13.0"
    folder.mkdir()
    partial = folder / "result.json"
    partial.write_text(json.dumps(result()))  # would pass against itself
    outcome = VersionOutcome(
        "2.13.0", "error", "image", partial, None,
        "torch 2.13.0: partial result kept: timed out after 3600 s", 1.0, 3600.0,
    )  # fmt: skip
    _keep_error(outcome, tmp_path)
    assert not partial.exists() and (folder / PARTIAL_NAME).is_file()
    baseline = parse(result(), "baseline.json", "baseline")
    run_set = judge_run_set([ResultSource(partial, "torch-2.13.0")], baseline)
    assert run_set.overall == "error" and run_set.exit_code == 3
