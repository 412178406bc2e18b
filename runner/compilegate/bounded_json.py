"""Read a JSON document that crossed a trust boundary, in bounded memory and time.

A result, a baseline or a child's report can come from the code under test (a container's
/out, a pull request's artifact) and hold whatever its author wrote. `json.loads` builds the
whole tree before anything looks at it: 48 MiB of `[{},{},…]` became 2.6 GB and 19 s of CPU
on the host, and 200,000 nested `[` a RecursionError (issue 38). So a document is measured
before it is parsed:

- its size against `max_bytes`, from fstat before a byte is read (and the read stops there);
- its structure, by a scan of its tokens that stops at the first limit passed: nesting
  depth, values in all (keys included), items of one list, keys of one object, characters
  of one number or literal (a 10,000-digit integer is a ValueError, or minutes of CPU),
  bytes of one object key as written (issue 51: every message and every pass that names a
  key path multiplies a key by the values under it: a 1 MB key over 200,000 NaN, 1.8 MB in
  all, was 200 GB of key paths).

Only then does `json.loads` build it: a tree within those limits. The scan finds tokens
where JSON does for every prefix JSON accepts, so nothing json.loads would build, even
before it stops at a syntax error, escapes the count; what is not JSON is left to
json.loads to refuse. Last, a string or key holding a lone surrogate (`"\\ud800"`, which
JSON's escapes allow and Unicode does not: no UTF-8 writer can write it, issue 51) is
refused, naming its key path.

Memory: reading any document within DOCUMENT_LIMITS costs the tree json.loads builds of
it and passes that keep their first findings (results/model.py), under 150 MiB over an
idle CLI at the worst shapes found (docs/security.md, "Memory of a document within the
limits"; held by tests/integration/test_document_work_bounds.py).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .schemas import format_key_path


@dataclass(frozen=True)
class JsonLimits:
    """The most a document may hold; over any one of them it is refused, unparsed."""

    max_bytes: int
    max_depth: int
    max_values: int
    max_list_items: int
    max_object_keys: int
    max_scalar_chars: int = 64  # a float's repr is at most 24
    # The longest key of any real document is 38 characters (a profiled function's name,
    # `CachingAutotuner.benchmark_all_configs`); the config caps the names that become keys
    # (variant ids, step names) at 200. As written, escapes count: json.dump writes each
    # non-ASCII character as `\uXXXX`, 6 bytes, so 4096 bytes hold 682 of them.
    max_key_bytes: int = 4096


# A result, a baseline, a child's report (docs/security.md says why these numbers). The
# largest real document, the H200 run of 2026-12-04 (1 step x 2 variants x 4 processes x 200
# iterations), is 298 KB: depth 10, 11,270 values, lists of 200, objects of 39 keys.
# Within them, reading and checking a document costs under 150 MiB over an idle CLI
# (module docstring).
DOCUMENT_LIMITS = JsonLimits(
    max_bytes=16 << 20,
    max_depth=32,
    max_values=1_000_000,
    max_list_items=250_000,
    max_object_keys=10_000,
)


class DocumentRefused(ValueError):
    """The document passed a limit; the message names it, in a phrase."""


def read_bounded_json(path: Path | str, limits: JsonLimits = DOCUMENT_LIMITS) -> Any:
    """The JSON document at `path`, parsed only when within `limits`. Raises what `open`
    raises, DocumentRefused, UnicodeDecodeError, or json.JSONDecodeError."""
    return loads_bounded(read_bounded_bytes(path, limits.max_bytes), limits)


def read_bounded_bytes(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of `path`; DocumentRefused when there are more than `max_bytes`."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise DocumentRefused(_too_large(size, max_bytes))
        data = handle.read(max_bytes + 1)  # the file may grow after fstat
    if len(data) > max_bytes:
        raise DocumentRefused(_too_large(len(data), max_bytes))
    return data


def loads_bounded(data: bytes, limits: JsonLimits = DOCUMENT_LIMITS) -> Any:
    """`data` (UTF-8 JSON) parsed only when within `limits` (module docstring)."""
    if len(data) > limits.max_bytes:
        raise DocumentRefused(_too_large(len(data), limits.max_bytes))
    escapes_surrogate = check_structure(data, limits)
    document = json.loads(data.decode("utf-8"))
    if escapes_surrogate:
        refuse_lone_surrogates(document)
    return document


# A string (its escaped quotes and backslashes taken out first), an opening or closing
# bracket, a colon, or a number or literal. Commas and white space are skipped.
_TOKEN = re.compile(rb'"[^"]*"|[\[{\]}:]|[^\s\[\]{},:"]+')
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_COLON = ord(":")
_QUOTE = ord('"')
_LIST = ord("[")


def check_structure(data: bytes, limits: JsonLimits) -> bool:
    """Raise DocumentRefused at the first structure limit `data` passes; else whether a
    string of `data` escapes a surrogate (`\\udXXX`: a lone one is refused once parsed).
    Memory: one copy of `data` and a stack of at most `max_depth`; time: stops at the first
    limit."""
    # JSON pairs backslashes from the left, as replace does: what is left of `\\` and `\"`
    # leaves every quote that opens or closes a string, and no other (a plain regex for an
    # escaped string backtracks with ~60 bytes a repetition: 968 MB for 16 MiB of `\n`).
    # Each pair becomes two bytes that are neither: a string's token keeps its length as
    # written (max_key_bytes), and a `\u` left is an escape's, never an escaped backslash's.
    plain = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    opened: list[int] = []  # the bracket of each container around the scan
    counts: list[int] = []  # its items (a list) or keys (an object) so far
    values = 0
    previous = b""  # the token before this one: a key, when this one is its colon
    for match in _TOKEN.finditer(plain):
        token = match.group()
        last, previous = previous, token
        first = token[0]
        if first in _CLOSE:
            if opened:
                opened.pop()
                counts.pop()
            continue
        if first == _COLON:  # one more key of the object around
            if last[:1] == b'"' and len(last) - 2 > limits.max_key_bytes:
                raise DocumentRefused(
                    f"an object key of more than {limits.max_key_bytes} bytes (max_key_bytes)"
                )
            if opened and opened[-1] != _LIST:
                counts[-1] += 1
                if counts[-1] > limits.max_object_keys:
                    raise DocumentRefused(
                        f"an object of more than {limits.max_object_keys} keys (max_object_keys)"
                    )
            continue
        values += 1
        if values > limits.max_values:
            raise DocumentRefused(f"more than {limits.max_values} values (max_values)")
        if opened and opened[-1] == _LIST:
            counts[-1] += 1
            if counts[-1] > limits.max_list_items:
                raise DocumentRefused(
                    f"a list of more than {limits.max_list_items} items (max_list_items)"
                )
        if first in _OPEN:
            if len(opened) == limits.max_depth:
                raise DocumentRefused(f"nested deeper than {limits.max_depth} levels (max_depth)")
            opened.append(first)
            counts.append(0)
        elif first != _QUOTE and len(token) > limits.max_scalar_chars:
            raise DocumentRefused(
                f"a number or literal of more than {limits.max_scalar_chars} characters "
                "(max_scalar_chars)"
            )
    return _SURROGATE_ESCAPE.search(plain) is not None


def refuse_lone_surrogates(document: Any) -> None:
    """DocumentRefused naming the key path of the first string or key of `document` that
    holds a lone surrogate (json.loads joins a pair into one character: one left alone is
    half a pair). One walk of the tree, keeping only the path to where it is."""
    path: list[Any] = []
    if _holds_lone_surrogate(document, path):
        raise DocumentRefused(
            f"a lone surrogate at {format_key_path(path)}: half of a UTF-16 pair, not Unicode text"
        )


def _holds_lone_surrogate(value: Any, path: list[Any]) -> bool:
    """Whether `value` holds one; `path` is left at the first (the depth is max_depth's)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.search(value) is not None
    items: Any = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    for key, item in items:
        path.append(key)
        if isinstance(key, str) and _LONE_SURROGATE.search(key):
            return True
        if _holds_lone_surrogate(item, path):
            return True
        path.pop()
    return False


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _too_large(size: int, max_bytes: int) -> str:
    return f"{size} bytes, more than {max_bytes} ({max_bytes >> 20} MiB, max_bytes)"
