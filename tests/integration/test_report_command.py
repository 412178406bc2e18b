"""`compilegate report` through the real CLI: one document for a run set, the gate's exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gate_docs import environment, result, step, variant

from repo_helpers import REPO_ROOT


def cli(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilegate", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner"), **(env or {})},
        check=False,
        timeout=120,
    )


def write(path: Path, document: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def matrix_folder(tmp_path: Path) -> Path:
    """What `compilegate matrix` leaves: one folder per version, a failed one with error.txt."""
    out = tmp_path / "results"
    write(out / "torch-2.13.0" / "result.json", result(env=environment(torch="2.13.0")))
    slower = result(step(variants=[variant(speedup=0.9)]), env=environment(torch="2.12.0"))
    write(out / "torch-2.12.0" / "result.json", slower)
    (out / "torch-9.9.9").mkdir()
    (out / "torch-9.9.9" / "error.txt").write_text("image build failed: no torch==9.9.9\n")
    return out


def test_markdown_report_over_a_results_dir_names_every_version(tmp_path: Path):
    baseline = write(tmp_path / "baseline.json", result())
    out = tmp_path / "comment.md"
    done = cli(
        "report",
        "--results-dir",
        matrix_folder(tmp_path),
        "--baseline",
        baseline,
        "--format",
        "markdown",
        "--out",
        out,
        "--comment-key",
        "gpu",
    )
    assert done.returncode == 1, done.stderr  # the regression outranks the failed version
    text = out.read_text()
    assert text.startswith("<!-- compilegate: gpu -->")
    assert text.splitlines()[1].startswith(
        "### ❌ compilegate fails in train: step speed on torch 2.12.0, "
        "a failed run on torch 9.9.9;"
    )
    assert "| 2.12.0 | train | ❌\u00a0fails | speedup vs eager |" in text
    assert "| 2.13.0 | train | pass | - |" in text
    assert "| 9.9.9 | - | ❌\u00a0error | image build failed: no torch==9.9.9 |" in text


def test_json_report_carries_each_versions_verdict(tmp_path: Path):
    baseline = write(tmp_path / "baseline.json", result())
    done = cli(
        "report",
        "--results-dir",
        matrix_folder(tmp_path),
        "--baseline",
        baseline,
        "--format",
        "json",
    )
    report = json.loads(done.stdout)
    assert [(v["label"], v["overall"]) for v in report["versions"]] == [
        ("torch 2.12.0", "regression"),
        ("torch 2.13.0", "pass"),
        ("torch 9.9.9", "error"),
    ]
    assert report["exit_code"] == done.returncode == 1


def test_an_invalid_result_is_an_error_row_never_rendered(tmp_path: Path):
    forged = result()
    forged["steps"][0]["variants"][0]["speedup"] = "1.5x <img src=x>"
    bad = write(tmp_path / "forged.json", forged)
    done = cli("report", "--result", bad, "--format", "markdown")
    assert done.returncode == 3
    assert "<img" not in done.stdout and "not a valid compilegate result" in done.stdout


def test_no_results_is_a_usage_error_in_one_line(tmp_path: Path):
    done = cli("report", "--results-dir", tmp_path / "nope")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--results-dir" in done.stderr


def test_a_bad_comment_key_is_a_usage_error_in_one_line(tmp_path: Path):
    done = cli("report", "--result", tmp_path / "r.json", "--comment-key", "bad key!")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--comment-key" in done.stderr
