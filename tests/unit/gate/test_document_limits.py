"""Every reader of a document from across a trust boundary applies bounded_json's limits
(issue 38): a result or baseline file, a paired run's base beside its result, a child's
report. Over one, the file is one line naming it and the limit (exit 2), or that version's
or child's error, never a RecursionError or gigabytes of memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_docs import result, step, variant

from compilegate.errors import EXIT_USAGE, BaselineError
from compilegate.gate.documents import read_document
from compilegate.gate.run_set import find_results, judge_run_set
from compilegate.run.launcher import read_report_file

NESTED = b"[" * 200_000  # json.loads: RecursionError
WIDE = b"[" + b"{}," * 300_000 + b"{}]"  # 900 KB; parsed whole: about 50 MB


def write(path: Path, content: bytes | dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


@pytest.mark.parametrize(
    ("content", "limit"),
    [
        (NESTED, "nested deeper than 32 levels (max_depth)"),
        (WIDE, "a list of more than 250000 items (max_list_items)"),
        (
            b'{"a": ' + b"9" * 5000 + b"}",
            "a number or literal of more than 64 characters (max_scalar_chars)",
        ),
    ],
    ids=["nested", "wide", "long-number"],
)
@pytest.mark.parametrize("role", ["result", "baseline"])
def test_a_document_over_a_limit_is_one_line_naming_file_and_limit(
    tmp_path: Path, content: bytes, limit: str, role: str
) -> None:
    path = write(tmp_path / "doc.json", content)
    with pytest.raises(BaselineError) as caught:
        read_document(path, role=role)
    assert caught.value.exit_code == EXIT_USAGE
    assert str(caught.value) == f"{path}: {role} file refused: {limit}"


def test_a_document_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(256 << 20)  # sparse: reading it would take 256 MiB
    with pytest.raises(BaselineError, match=r"big.json: result file refused: 268435456 bytes"):
        read_document(path)


def test_a_document_of_a_schema_error_per_value_stops_counting(tmp_path: Path) -> None:
    """100,000 empty steps in 400 KB were 600,000 jsonschema errors: 1.8 GB, 12 s."""
    document = result(step(variants=[variant()]))
    document["steps"] = [{} for _ in range(100_000)]
    path = write(tmp_path / "r.json", document)
    with pytest.raises(BaselineError) as caught:
        read_document(path)
    assert str(caught.value).endswith("(and at least 99 more problems)")


def test_a_nested_version_is_that_versions_error_and_the_others_are_judged(
    tmp_path: Path,
) -> None:
    good = result(step(variants=[variant()]))
    write(tmp_path / "torch-2.13.0" / "result.json", good)
    write(tmp_path / "torch-2.12.0" / "result.json", NESTED)
    # a paired run's base beside its result is read the same way
    write(tmp_path / "torch-2.11.0" / "result.json", good)
    write(tmp_path / "torch-2.11.0" / "result.base.json", WIDE)
    run_set = judge_run_set(find_results([], tmp_path), None)
    by_folder = {Path(v.source).parent.name: v for v in run_set.versions}
    assert by_folder["torch-2.13.0"].error is None
    assert by_folder["torch-2.13.0"].document is not None
    assert by_folder["torch-2.12.0"].error.endswith(
        "result file refused: nested deeper than 32 levels (max_depth)"
    )
    assert "result.base.json: baseline file refused: a list of more than" in (
        by_folder["torch-2.11.0"].error
    )
    assert run_set.exit_code == 3


# Issue 51: NaN under a key of 1 MB, which the non-finite scan (non_finite_found) made a
# 1 MB path of each; and half a UTF-16 pair, which no report could be written with.
LONG_KEY = b'{"' + b"A" * 1_000_000 + b'": [' + b",".join([b"NaN"] * 200_000) + b"]}"
LONE_SURROGATE = b'{"variant": {"error": "print() in \\ud800 forward"}}'


@pytest.mark.parametrize(
    "content", [NESTED, WIDE, LONG_KEY, LONE_SURROGATE],
    ids=["nested", "wide", "long-key", "lone-surrogate"],
)  # fmt: skip
def test_a_childs_forged_report_is_its_error(tmp_path: Path, content: bytes) -> None:
    report, cause = read_report_file(write(tmp_path / "out.json", content))
    assert report is None
    assert cause is not None and cause.how == "refused", cause
