"""A document from across a trust boundary, and the config, are measured before they are
parsed (issue 38): nesting, width or size over a limit is one line and exit 2, in bounded
memory and time, never a RecursionError (exit 3); a results folder with one such version
still gets its report, that version shown as an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, assert_one_line_error, run_cli, run_cli_measured, write_config

NANOGPT = REPO_ROOT / "tests/unit/data/nanogpt"
NESTED = b"[" * 200_000  # json.loads: RecursionError, `internal error`, exit 3
DOCUMENT_MAX_BYTES = 16 << 20


def wide(size_bytes: int) -> bytes:
    """`[{},{},…]` of `size_bytes`: about 50 bytes of memory a byte when parsed whole."""
    return b"[" + b"{}," * (size_bytes // 3 - 1) + b"{}]"


def idle_peak_bytes(tmp_path: Path) -> int:
    """An idle CLI's peak RSS measured the same way (Linux carries ru_maxrss across execve:
    both include the forked pytest's own peak)."""
    _, peak = run_cli_measured("--version", tmp_path=tmp_path, memory_cap_bytes=1 << 30)
    return peak


@pytest.mark.parametrize("role", ["result", "baseline"])
def test_a_nested_document_is_one_line_exit_2(tmp_path: Path, role: str) -> None:
    nested = tmp_path / "nested.json"
    nested.write_bytes(NESTED)
    files = {"result": str(NANOGPT / "head.json"), "baseline": str(NANOGPT / "baseline.json")}
    files[role] = str(nested)
    run = run_cli("compare", "--baseline", files["baseline"], "--result", files["result"])
    assert_one_line_error(
        run, 2, f"{nested}: {role} file refused: nested deeper than 32 levels (max_depth)"
    )


@pytest.mark.parametrize(
    ("size_bytes", "limit"),
    [
        (DOCUMENT_MAX_BYTES + 3, "bytes, more than 16777216 (16 MiB, max_bytes)"),
        (DOCUMENT_MAX_BYTES - 3, "a list of more than 250000 items (max_list_items)"),
    ],
    ids=["over-the-size", "under-the-size"],
)
def test_a_wide_result_is_refused_in_bounded_memory(
    tmp_path: Path, size_bytes: int, limit: str
) -> None:
    """Issue 38: a direct read of 32 MiB of `[{},{},…]` took 1.7 GB and 39 s."""
    forged = tmp_path / "wide.json"
    forged.write_bytes(wide(size_bytes))
    started = time.monotonic()
    run, peak = run_cli_measured(
        "compare", "--baseline", str(NANOGPT / "baseline.json"), "--result", str(forged),
        tmp_path=tmp_path, memory_cap_bytes=2 << 30,
    )  # fmt: skip
    elapsed_s = time.monotonic() - started
    assert_one_line_error(run, 2, f"{forged}: result file refused: ", limit)
    grew_mib = (peak - idle_peak_bytes(tmp_path)) / 2**20
    assert grew_mib < 100, f"{grew_mib:.0f} MiB over an idle CLI"
    assert elapsed_s < 30


GITHUB_ENV = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_REPOSITORY": "acme/trainer",
    "GITHUB_EVENT_NAME": "push",
    "GITHUB_SHA": "c" * 40,
    "GITHUB_API_URL": "https://api.github.com",
    "GITHUB_SERVER_URL": "https://github.com",
}


@pytest.mark.parametrize("command", ["report", "publish"])
def test_a_nested_version_in_a_results_folder_is_its_error_the_rest_is_reported(
    tmp_path: Path, command: str
) -> None:
    results = tmp_path / "results"
    good = results / "torch-2.13.0" / "result.json"
    good.parent.mkdir(parents=True)
    good.write_text((NANOGPT / "baseline.json").read_text())  # judged: pass
    (results / "torch-2.14.0").mkdir()
    (results / "torch-2.14.0" / "result.json").write_bytes(NESTED)
    summary = tmp_path / "summary.md"
    args = ["--results-dir", str(results), "--baseline", str(NANOGPT / "baseline.json")]
    env = {}
    if command == "publish":
        args.append("--no-comment")
        env = {**GITHUB_ENV, "GITHUB_STEP_SUMMARY": str(summary)}
        env["GITHUB_OUTPUT"] = str(tmp_path / "output")
    run = run_cli(command, *args, env=env)
    assert run.returncode == 3, run.stderr  # a version is an error: a run error
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    shown = summary.read_text() if command == "publish" else run.stdout
    assert "nested deeper than 32 levels" in shown
    assert "2.13.0" in shown  # the good version is reported
    if command == "publish":
        verdict = json.loads((results / "report.json").read_text())
        errors = {Path(v["source"]).parent.name: v["error"] for v in verdict["versions"]}
        assert errors["torch-2.13.0"] is None
        assert "nested deeper than 32 levels" in errors["torch-2.14.0"]


def test_a_nested_config_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """Issue 38: a 200 KB compilegate.yml of `[` ran 12 minutes in PyYAML's scanner, then
    raised RecursionError, on the host, before any container."""
    config = write_config(
        tmp_path / "nested.yml", "  - name: a\n    entry: x.py:f\n    variants: " + "[" * 200_000
    )
    started = time.monotonic()
    run = run_cli(
        "run", "--config", str(config), "--repo", str(REPO_ROOT), "--out", str(tmp_path / "r.json"),
        timeout=120,
    )  # fmt: skip
    assert_one_line_error(run, 2, "nested.yml:5: nested deeper than 16 levels")
    assert time.monotonic() - started < 30


def test_the_bench_runs_and_every_case_is_refused_in_bounded_memory() -> None:
    """bench/document_limits.py, 64-fold smaller: what docs/security.md's figures come from."""
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench/document_limits.py"), "--tiny", "--json"],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "runner")},
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    cases = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(cases) == 7, done.stdout
    for case in cases:
        assert case["exit_code"] == 2 and case["peak_mib"] < 100, case
        assert "error: " in case["last_line"] and "internal error" not in case["last_line"], case
