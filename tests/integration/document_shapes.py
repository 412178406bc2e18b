"""The costliest documents within bounded_json.py's DOCUMENT_LIMITS (issue 51): what a
result from across the boundary may hold and still be parsed, shaped to multiply the work
after the read. Each writer takes the file's path and writes at most 16 MiB."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from repo_helpers import REPO_ROOT

HEAD = REPO_ROOT / "tests/unit/data/nanogpt/head.json"
MAX_BYTES = 16 << 20
MAX_KEY_BYTES = 4096
MAX_LIST_ITEMS = 250_000
MAX_DEPTH = 32


def long_keys_over_many_values(path: Path) -> None:
    """Objects 31 deep, each under a key of the longest length allowed, over a list of
    NaN: every value's key path is 31 long keys (before issue 51: 127 KB a path, 31 GB)."""
    keys = [f"{level:02d}" + "A" * (MAX_KEY_BYTES - 2) for level in range(MAX_DEPTH - 1)]
    nan_list = "[" + ",".join(["NaN"] * (MAX_LIST_ITEMS - 1)) + "]"
    path.write_text("".join(f'{{"{key}":' for key in keys) + nan_list + "}" * len(keys))


def many_long_keys(path: Path) -> None:
    """One object of as many longest keys as 16 MiB holds, each over a NaN: every key is
    in a path, and in the schema's message that lists the keys it does not know."""
    count = MAX_BYTES // (MAX_KEY_BYTES + 16)
    items = (f'"{index:06d}{"K" * (MAX_KEY_BYTES - 6)}":NaN' for index in range(count))
    path.write_text("{" + ",".join(items) + "}")


def many_keys(path: Path) -> None:
    """The most keys the limits allow: 50 objects of 10,000 keys (1,000,000 values, keys
    included), each key unknown to the schema."""
    objects = (
        "{" + ",".join(f'"k{o:02d}{k:05d}":{k}' for k in range(10_000)) + "}" for o in range(49)
    )
    path.write_text('{"steps":[' + ",".join(objects) + "]}")


def long_strings(path: Path) -> None:
    """Strings of 16 MiB in all where the schema wants numbers: each of its messages
    writes the value it refuses (jsonschema's repr)."""
    document = json.loads(HEAD.read_text())
    step = document["steps"][0]
    step["process_noise_pct"] = "S" * (MAX_BYTES // 2 - 200_000)
    step["variants"][0]["compile_s"] = "T" * (MAX_BYTES // 2 - 200_000)
    path.write_text(json.dumps(document))


def many_strings(path: Path) -> None:
    """100 steps, each a 160 KB string instead of an object: 100 schema errors, each
    message with its value."""
    document = json.loads(HEAD.read_text())
    document["steps"] = [f"{index:03d}" + "S" * (MAX_BYTES // 101) for index in range(100)]
    path.write_text(json.dumps(document))


def deep_and_wide(path: Path) -> None:
    """32 levels of lists, the last of 249,000 NaN, each level beside it as wide as the
    values left allow: a non-finite value at every depth."""
    inner = "[" + ",".join(["NaN"] * 249_000) + "]"
    for _ in range(MAX_DEPTH - 1):
        inner = "[" + ",".join(["NaN"] * 24_000) + "," + inner + "]"
    path.write_text(inner)


def many_small_objects(path: Path) -> None:
    """The most objects the limits allow: 333,000 `{"a":0}` in two lists (1,000,000
    values), each with the step's required keys missing."""
    half = ",".join(['{"a":0}'] * 166_500)
    path.write_text('{"steps":[' + half + '],"declared_steps":[' + half + "]}")


def valid_with_a_wide_open_object(path: Path) -> None:
    """A valid result whose variant's open `cache` object holds nearly 1,000,000 values:
    read, typed, judged and rendered like any other."""
    document = json.loads(HEAD.read_text())
    wide = {f"k{index:04d}": [0.5] * 240 for index in range(4000)}
    document["steps"][0]["variants"][0]["cache"] = wide
    path.write_text(json.dumps(document))


def duplicate_names(path: Path) -> None:
    """200,000 steps of one name: 199,999 duplicates (and as many schema errors)."""
    name = "N" * 60
    path.write_text('{"steps":[' + ",".join([f'{{"name":"{name}"}}'] * 200_000) + "]}")


SHAPES: dict[str, Callable[[Path], None]] = {
    "long keys over many values": long_keys_over_many_values,
    "many long keys": many_long_keys,
    "many keys": many_keys,
    "long strings": long_strings,
    "many strings": many_strings,
    "deep and wide": deep_and_wide,
    "many small objects": many_small_objects,
    "valid, a wide open object": valid_with_a_wide_open_object,
    "duplicate names": duplicate_names,
}
