"""Bounded work after the bounded read (issue 51), through the real CLI.

- A document within every limit of bounded_json.py may still be shaped to multiply the work
  after the read: NaN under long keys cost `compare` 2.9 GB before the non-finite scan kept
  only its first paths, each cut. Every worst shape of document_shapes.py is read, checked
  and refused (or judged) under an address-space cap, within the ceiling docs/security.md
  states, in one line and exit 2.
- A lone surrogate (`"\\ud800"`, half a UTF-16 pair) in a result was an internal error (exit
  3, `UnicodeEncodeError`) in the text and markdown reports, and in `publish` no summary or
  comment at all: now the reader refuses it naming the file and key path.
- A results folder is read within bounds: each error.txt from its last 16 KiB, at most 64
  result documents of 64 MiB in all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helpers import REPO_ROOT, assert_one_line_error, run_cli, run_cli_measured
from document_shapes import SHAPES

NANOGPT = REPO_ROOT / "tests/unit/data/nanogpt"
BASELINE = NANOGPT / "baseline.json"
MEMORY_CAP_BYTES = 1 << 30
# docs/security.md, "Memory of a document within the limits": what reading, checking and
# refusing any document within the limits costs over an idle CLI (the worst measured: 88 MiB).
CEILING_MIB = 150
GITHUB_ENV = {
    "GITHUB_ACTIONS": "true",
    "GITHUB_REPOSITORY": "acme/trainer",
    "GITHUB_EVENT_NAME": "push",
    "GITHUB_SHA": "c" * 40,
    "GITHUB_API_URL": "https://api.github.com",
    "GITHUB_SERVER_URL": "https://github.com",
}


def idle_peak_bytes(tmp_path: Path) -> int:
    """An idle CLI's peak RSS measured the same way (Linux carries ru_maxrss across execve:
    both include the forked pytest's own peak)."""
    _, peak = run_cli_measured("--version", tmp_path=tmp_path, memory_cap_bytes=MEMORY_CAP_BYTES)
    return peak


def publish_env(tmp_path: Path) -> dict[str, str]:
    return {
        **GITHUB_ENV,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_worst_shapes_within_the_limits_stay_under_the_ceiling(
    tmp_path: Path, shape: str
) -> None:
    forged = tmp_path / "result.json"
    SHAPES[shape](forged)
    assert forged.stat().st_size <= 16 << 20
    run, peak = run_cli_measured(
        "compare", "--baseline", str(BASELINE), "--result", str(forged),
        tmp_path=tmp_path, memory_cap_bytes=MEMORY_CAP_BYTES,
    )  # fmt: skip
    if shape.startswith("valid"):
        assert run.returncode == 1 and run.stderr == "", run.stderr  # judged: a regression
    else:
        assert_one_line_error(run, 2, f"{forged}: ")
        assert len(run.stderr) < 1000, run.stderr  # its key paths cut
    grew_mib = (peak - idle_peak_bytes(tmp_path)) / 2**20
    assert grew_mib < CEILING_MIB, f"{grew_mib:.0f} MiB over an idle CLI"


def test_the_issues_document_is_refused_by_its_key(tmp_path: Path) -> None:
    """Issue 51's 1.8 MB result: one key of 1,000,000 bytes over 200,000 NaN."""
    forged = tmp_path / "result.json"
    forged.write_text('{"' + "A" * 1_000_000 + '": [' + ",".join(["NaN"] * 200_000) + "]}")
    run, _ = run_cli_measured(
        "compare", "--baseline", str(BASELINE), "--result", str(forged),
        tmp_path=tmp_path, memory_cap_bytes=MEMORY_CAP_BYTES,
    )  # fmt: skip
    assert_one_line_error(
        run, 2, f"{forged}: result file refused: an object key of more than 4096 bytes"
    )


def test_publish_of_forged_versions_reports_each_under_the_ceiling(tmp_path: Path) -> None:
    """A fork's artifact of three versions shaped to multiply the work, and one good one:
    each forged version is its error, the good one judged, the summary written."""
    results = tmp_path / "results"
    forged = ("long keys over many values", "deep and wide", "many small objects")
    for index, shape in enumerate(forged):
        folder = results / f"torch-2.{index}.0"
        folder.mkdir(parents=True)
        SHAPES[shape](folder / "result.json")
    (results / "torch-2.13.0").mkdir()
    (results / "torch-2.13.0" / "result.json").write_text(BASELINE.read_text())
    run, peak = run_cli_measured(
        "publish", "--results-dir", str(results), "--baseline", str(BASELINE),
        "--untrusted-results", "--no-comment",
        tmp_path=tmp_path, memory_cap_bytes=MEMORY_CAP_BYTES, env=publish_env(tmp_path),
    )  # fmt: skip
    assert run.returncode == 3, run.stderr  # a version is an error: a run error
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    versions = json.loads((results / "report.json").read_text())["versions"]
    errors = {Path(v["source"]).parent.name: v["error"] for v in versions}
    assert errors["torch-2.13.0"] is None
    assert "NaN is not a finite number" in errors["torch-2.0.0"]
    assert len(errors["torch-2.0.0"]) < 1000
    assert all(errors[f"torch-2.{index}.0"] for index in range(3))
    assert "2.13.0" in (tmp_path / "summary.md").read_text()
    grew_mib = (peak - idle_peak_bytes(tmp_path)) / 2**20
    assert grew_mib < CEILING_MIB, f"{grew_mib:.0f} MiB over an idle CLI"


def with_lone_surrogates(path: Path) -> Path:
    """The nanoGPT head, its graph break in a file whose name is not UTF-8 text, its reason
    holding half a UTF-16 pair: as json.dump writes them (`\\udc80`, `\\ud800`)."""
    document = json.loads((NANOGPT / "head.json").read_text())
    site = document["steps"][0]["variants"][0]["graph_breaks"]["sites"][0]
    site["reason"] = "print() in \ud800 forward"
    site["file"] = "mo\udc80del.py"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_lone_surrogate_is_refused_naming_file_and_key(tmp_path: Path, fmt: str) -> None:
    forged = with_lone_surrogates(tmp_path / "result.json")
    run = run_cli("compare", "--baseline", str(BASELINE), "--result", str(forged), "--format", fmt)
    assert_one_line_error(
        run, 2,
        f"{forged}: result file refused: a lone surrogate at "
        "steps[0].variants[0].graph_breaks.sites[0].file",
    )  # fmt: skip


def test_a_surrogate_pair_and_an_escaped_backslash_u_are_text(tmp_path: Path) -> None:
    """`\\ud83d\\ude00` is one character (😀), and `\\\\ud800` a backslash and `ud800`."""
    document = json.loads((NANOGPT / "head.json").read_text())
    site = document["steps"][0]["variants"][0]["graph_breaks"]["sites"][0]
    site["reason"] = "print(\U0001f600) in \\ud800 forward"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document))  # ensure_ascii: the pair and `\\ud800` escaped
    assert "\\ud83d\\ude00" in path.read_text() and "\\\\ud800" in path.read_text()
    run = run_cli("compare", "--baseline", str(BASELINE), "--result", str(path))
    assert run.returncode == 1 and run.stderr == "", run.stderr


def test_publish_reports_every_version_when_one_is_not_text(tmp_path: Path) -> None:
    """A version with a lone surrogate, and one whose folder's name is not UTF-8 (a fork's
    artifact may hold one): each is its error, shown escaped; the summary and the report
    are written."""
    results = tmp_path / "results"
    (results / "torch-2.13.0").mkdir(parents=True)
    (results / "torch-2.13.0" / "result.json").write_text(BASELINE.read_text())
    (results / "torch-2.14.0").mkdir()
    with_lone_surrogates(results / "torch-2.14.0" / "result.json")
    odd = os.fsencode(results) + b"/torch-\xff"
    os.mkdir(odd)
    with open(odd + b"/result.json", "w") as handle:
        handle.write(BASELINE.read_text())
    run = run_cli(
        "publish", "--results-dir", str(results), "--baseline", str(BASELINE),
        "--untrusted-results", "--no-comment", env=publish_env(tmp_path),
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    assert run.stderr == "", run.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "a lone surrogate at steps\\[0\\]" in summary
    assert "\\\\udcff" in summary and "not UTF-8 text" in summary
    versions = json.loads((results / "report.json").read_text())["versions"]
    assert [v["error"] is None for v in versions].count(True) == 1


def test_publish_reads_the_last_line_of_a_huge_error_file_only(tmp_path: Path) -> None:
    """Issue 51: a 200 MB error.txt (204 KB zipped) cost `publish` 1.07 GB: it was read
    whole. Sparse here: no disk written."""
    results = tmp_path / "results"
    (results / "torch-2.13.0").mkdir(parents=True)
    (results / "torch-2.13.0" / "result.json").write_text(BASELINE.read_text())
    (results / "torch-2.14.0").mkdir()
    with open(results / "torch-2.14.0" / "error.txt", "wb") as handle:
        handle.truncate(200 << 20)
        handle.seek(200 << 20)
        handle.write(b"\nERROR: No matching distribution found for torch==2.14.0 " + b"x" * 400)
    run, peak = run_cli_measured(
        "publish", "--results-dir", str(results), "--baseline", str(BASELINE),
        "--untrusted-results", "--no-comment",
        tmp_path=tmp_path, memory_cap_bytes=MEMORY_CAP_BYTES, env=publish_env(tmp_path),
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    versions = json.loads((results / "report.json").read_text())["versions"]
    error = next(v["error"] for v in versions if v["error"])
    assert error.startswith("ERROR: No matching distribution found for torch==2.14.0 xxx")
    assert len(error) == 300 and error.endswith("…")
    grew_mib = (peak - idle_peak_bytes(tmp_path)) / 2**20
    assert grew_mib < 50, f"{grew_mib:.0f} MiB over an idle CLI"


def test_publish_refuses_more_result_documents_than_a_run_set_reads(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    for index in range(65):
        (results / f"result-{index:02d}.json").write_text("{}")
    run = run_cli(
        "publish", "--results-dir", str(results), "--baseline", str(BASELINE),
        "--untrusted-results", "--no-comment", env=publish_env(tmp_path),
    )  # fmt: skip
    assert_one_line_error(
        run, 2, f"--results-dir {results}: more than 64 result documents", "MAX_RESULT_FILES"
    )


def test_publish_refuses_more_bytes_than_a_run_set_reads(tmp_path: Path) -> None:
    """Five documents of 16 MiB (each within a document's limit): 80 MiB, none read."""
    results = tmp_path / "results"
    for index in range(5):
        (results / f"torch-2.{index}.0").mkdir(parents=True)
        with open(results / f"torch-2.{index}.0" / "result.json", "wb") as handle:
            handle.truncate(16 << 20)  # sparse
    run = run_cli(
        "publish", "--results-dir", str(results), "--baseline", str(BASELINE),
        "--untrusted-results", "--no-comment", env=publish_env(tmp_path),
    )  # fmt: skip
    assert_one_line_error(
        run, 2, f"--results-dir {results}: 83886080 bytes of result documents",
        "(64 MiB, MAX_RESULT_TOTAL_BYTES)",
    )  # fmt: skip
