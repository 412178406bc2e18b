"""A document that crossed a trust boundary is measured before it is parsed (issue 38):
over a limit it is refused, naming the limit, in bounded time, never built."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from compilegate.bounded_json import (
    DOCUMENT_LIMITS,
    DocumentRefused,
    JsonLimits,
    loads_bounded,
    read_bounded_json,
)
from repo_helpers import REPO_ROOT

# Every real document stored here: the golden set, the nanoGPT pair, the report example.
STORED = sorted(
    [
        *(REPO_ROOT / "tests/unit/data/golden/docs").glob("*.json"),
        *(REPO_ROOT / "tests/unit/data/nanogpt").glob("*.json"),
        *(REPO_ROOT / "examples/report").rglob("*.json"),
    ]
)
SMALL = JsonLimits(max_bytes=1000, max_depth=3, max_values=20, max_list_items=5, max_object_keys=4)


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_stored_document_reads_as_json_does(path: Path) -> None:
    assert read_bounded_json(path) == json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("[[[[1]]]]", "nested deeper than 3 levels (max_depth)"),
        ("[1,2,3,4,5,6]", "a list of more than 5 items (max_list_items)"),
        ('{"a":1,"b":2,"c":3,"d":4,"e":5}', "an object of more than 4 keys (max_object_keys)"),
        ("[[1,2,3],[1,2,3],[1,2,3],[1,2,3],[1,2,3]]", "more than 20 values (max_values)"),
        ("[" + "1" * 65 + "]", "a number or literal of more than 64 characters"),
        ("[" + "1," * 600 + "1]", "1203 bytes, more than 1000"),
    ],
    ids=["depth", "list", "object", "values", "scalar", "bytes"],
)
def test_over_a_limit_is_refused_naming_it(text: str, limit: str) -> None:
    with pytest.raises(DocumentRefused, match=limit.replace("(", r"\(").replace(")", r"\)")):
        loads_bounded(text.encode(), SMALL)


def test_within_the_limits_is_parsed() -> None:
    text = '{"a": [1, 2.5, "x"], "b": {"c": [true, null]}, "d": "[[[[[[{{{{{"}'
    assert loads_bounded(text.encode(), SMALL) == json.loads(text)


@pytest.mark.parametrize(
    "inside", ['\\"[[[[[[', "\\\\", '\\\\\\"[[[[', "\\u005b\\u005b\\u005b\\u005b"]
)
def test_escaped_quotes_and_backslashes_end_strings_where_json_does(inside: str) -> None:
    text = f'["{inside}", "{inside}"]'
    assert loads_bounded(text.encode(), SMALL) == json.loads(text)
    nested = f'["{inside}", [[[[1]]]]]'  # the brackets after the string are structure
    with pytest.raises(DocumentRefused, match="max_depth"):
        loads_bounded(nested.encode(), SMALL)


def test_what_json_builds_before_a_syntax_error_is_counted() -> None:
    """json.loads builds the prefix it accepts before it fails: an unterminated list of
    empty objects is refused by its count, not handed to json.loads."""
    with pytest.raises(DocumentRefused, match="max_list_items"):
        loads_bounded(b"[{},{},{},{},{},{},{}" + b" oops", SMALL)
    with pytest.raises(json.JSONDecodeError):
        loads_bounded(b"[{},{} oops", SMALL)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(DOCUMENT_LIMITS.max_bytes + 1)  # sparse: nothing to read
    with pytest.raises(DocumentRefused, match=r"16777217 bytes, more than 16777216 \(16 MiB"):
        read_bounded_json(path)


def test_the_worst_within_the_size_limit_is_refused_in_bounded_time() -> None:
    """16 MiB of `[{},{},…]` (5.6 million objects; json.loads: about 1 GB) stops at the
    list's limit; 16 MiB of `[[1,1,1,1],…` at the values' limit, the longest scan."""
    size = DOCUMENT_LIMITS.max_bytes
    for data, limit in [
        (b"[" + b"{}," * (size // 3 - 1) + b"{}]", "max_list_items"),
        (b"[" + b"[1,1,1,1]," * (size // 10 - 1) + b"1]", "max_values"),
        (b"[" * size, "max_depth"),
    ]:
        started = time.process_time()
        with pytest.raises(DocumentRefused, match=limit):
            loads_bounded(data)
        assert time.process_time() - started < 5, limit


KEYED = JsonLimits(
    max_bytes=1000, max_depth=3, max_values=20, max_list_items=5, max_object_keys=4,
    max_key_bytes=8,
)  # fmt: skip


@pytest.mark.parametrize(
    ("key", "refused"),
    [
        ("abcdefgh", False),
        ("abcdefghi", True),
        ("\\\\\\\\\\\\\\\\", False),  # 8 bytes as written: four backslashes
        ("\\\\\\\\\\\\\\\\\\\\", True),  # 10 bytes: five, never the 0 of a scan without them
        ('\\"\\"\\"\\"\\"', True),
        ("\\u00e9\\u00e9", True),  # 12 bytes as written (json.dump's `é` is 6)
    ],
)
def test_a_key_longer_than_the_limit_as_written_is_refused(key: str, refused: bool) -> None:
    """Issue 51: a key is in every key path under it; its length counts as written."""
    text = f'{{"{key}": [1, 2]}}'
    if refused:
        with pytest.raises(DocumentRefused, match=r"an object key of more than 8 bytes"):
            loads_bounded(text.encode(), KEYED)
    else:
        assert loads_bounded(text.encode(), KEYED) == json.loads(text)
    assert loads_bounded(f'["{key}"]'.encode(), KEYED) == json.loads(f'["{key}"]')  # a value


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": ["x", "\\ud800"]}', "a[1]"),
        ('{"a": {"b\\udc80": 1}}', "a.b\\udc80"),
        ('["\\ude00\\ud83d"]', "[0]"),  # a low half before a high one: two lone halves
        ('["\\ud83d"]', "[0]"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_its_key_path(text: str, where: str) -> None:
    with pytest.raises(DocumentRefused) as caught:
        loads_bounded(text.encode())
    assert str(caught.value) == (
        f"a lone surrogate at {where}: half of a UTF-16 pair, not Unicode text"
    )


@pytest.mark.parametrize("text", ['["\\ud83d\\ude00"]', '["\\\\ud800"]', '["\\\\\\\\ud800"]'])
def test_a_surrogate_pair_or_an_escaped_backslash_is_text(text: str) -> None:
    assert loads_bounded(text.encode()) == json.loads(text)
