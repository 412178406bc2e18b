"""Find and load the JSON Schemas in `schemas/` (the public contracts); name key paths."""

from __future__ import annotations

import importlib.metadata
import itertools
import json
import re
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SCHEMA_NAMES = ("config", "result", "baseline")
# 4.18 brought the `referencing` registry that validation_errors resolves $refs with.
JSONSCHEMA_MINIMUM = (4, 18)
# The most schema violations validation_errors collects: the first is what a message shows.
MAX_ERRORS = 100
# A key path in a message: each key cut at MAX_KEY_CHARS (the longest key of a real result
# is 38), the whole path at MAX_KEY_PATH_CHARS.
MAX_KEY_CHARS = 40
MAX_KEY_PATH_CHARS = 120
# A schema violation's message as kept (a message shows the first 200 characters).
MAX_MESSAGE_CHARS = 1000


def schema_dir() -> Path:
    """`schemas/` of a source checkout, else the copy a wheel installs under share/: in the
    environment's prefix (a venv, pipx), or wherever the installation's own record puts it
    (`pip install --user`: ~/.local/share/compilegate/schemas)."""
    candidates = [
        Path(__file__).resolve().parents[2] / "schemas",
        Path(sys.prefix) / "share" / "compilegate" / "schemas",
        *_recorded_schema_dirs(),
    ]
    for candidate in candidates:
        if (candidate / "config.schema.json").is_file():
            return candidate
    raise FileNotFoundError("compilegate's schemas/ folder is missing from this installation")


def _recorded_schema_dirs() -> list[Path]:
    """The folders the installed distribution's RECORD lists its schema files in."""
    try:
        files = importlib.metadata.files("compilegate") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [
        Path(str(file.locate())).resolve().parent
        for file in files
        if file.name == "config.schema.json"
    ]


@cache
def load_schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        (schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8")
    )
    return schema


def format_key_path(path: Sequence[Any]) -> str:
    """`["steps", 0, "variants", 1]` → `steps[0].variants[1]`; empty → `(top level)`.

    Bounded, and one line, whatever the keys: each key cut at MAX_KEY_CHARS, what is not
    printable escaped (a newline, a bidi control, a lone surrogate: `\\n`, `\\u202e`,
    `\\ud800`), the path cut at MAX_KEY_PATH_CHARS (a document's keys are its author's:
    issue 51's 1 MB key made every path of its 200,000 values 1 MB)."""
    out = ""
    for part in path:
        if len(out) > MAX_KEY_PATH_CHARS:
            break
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{_key_text(str(part))}" if out else _key_text(str(part))
    if len(out) > MAX_KEY_PATH_CHARS:
        out = out[: MAX_KEY_PATH_CHARS - 1] + "…"
    return out or "(top level)"


def _key_text(key: str) -> str:
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in key[:MAX_KEY_CHARS])
    return shown + "…" if len(key) > MAX_KEY_CHARS else shown


def require_jsonschema() -> None:
    """A UsageError (exit 2) saying what to install when the jsonschema found is too old."""
    try:
        installed = importlib.metadata.version("jsonschema")
    except importlib.metadata.PackageNotFoundError:
        return  # not installed as a distribution (vendored?): let the import speak
    numbers = tuple(int(n) for n in re.findall(r"\d+", installed)[:2])
    if numbers < JSONSCHEMA_MINIMUM:
        wanted = ".".join(map(str, JSONSCHEMA_MINIMUM))
        raise UsageError(
            f"jsonschema {installed} is installed, compilegate needs jsonschema>={wanted}: "
            f"pip install --upgrade 'jsonschema>={wanted}'"
        )


def validation_errors(
    document: Any, name: str, *, may_lack: tuple[str, ...] = (), max_errors: int = MAX_ERRORS
) -> list[str]:
    """Schema violations of `document` against schemas/<name>.schema.json, each as
    `steps[0].variants[1]: message`, in document order: the first `max_errors` the walk
    finds (a hostile document holds one per value, and jsonschema's errors are large: 100,000
    empty steps in 400 KB made 600,000 errors, 1.8 GB and 12 s, issue 38). `may_lack`:
    required properties whose absence is not reported (keys an older writer of the document
    did not know)."""
    require_jsonschema()
    import jsonschema
    from referencing import Registry, Resource

    registry: Registry = Registry()
    for other in SCHEMA_NAMES:
        schema = load_schema(other)
        registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    validator = jsonschema.Draft202012Validator(load_schema(name), registry=registry)
    # jsonschema reports each missing required property as its own error, worded so.
    tolerated = {f"{key!r} is a required property" for key in may_lack}
    # Each kept as its path and its message cut at MAX_MESSAGE_CHARS (jsonschema writes the
    # value into it: `'AAAA…' is not of type 'number'`), so what is kept is bounded.
    found = (
        (list(e.path), e.message[:MAX_MESSAGE_CHARS])
        for e in validator.iter_errors(document)
        if not (e.validator == "required" and e.message in tolerated)
    )
    errors = sorted(itertools.islice(found, max_errors), key=lambda e: list(map(str, e[0])))
    return [f"{format_key_path(path)}: {message}" for path, message in errors]


def bounded_validator(schema: dict[str, Any]) -> Validator:
    """A Draft 2020-12 validator of `schema` that runs a `pattern` only on a string within
    its node's `maxLength`, and `uniqueItems` only on a list within its `maxItems` (the
    length keyword reports the value either way): jsonschema runs every keyword, and
    `uniqueItems` on a list it cannot sort compares every pair (36,398 items of a 262 KB
    config took 90 CPU-s, issue 51)."""
    require_jsonschema()
    validator: Validator = _bounded_validator_class()(schema)
    return validator


@cache
def _bounded_validator_class() -> Any:
    import jsonschema

    base = jsonschema.Draft202012Validator
    stock_pattern = base.VALIDATORS["pattern"]
    stock_unique = base.VALIDATORS["uniqueItems"]

    def pattern(validator: Validator, value: str, instance: Any, node: dict[str, Any]) -> Any:
        if isinstance(instance, str) and len(instance) > node.get("maxLength", len(instance)):
            return ()
        return stock_pattern(validator, value, instance, node)

    def unique_items(validator: Validator, value: bool, instance: Any, node: dict[str, Any]) -> Any:
        if isinstance(instance, list) and len(instance) > node.get("maxItems", len(instance)):
            return ()
        return stock_unique(validator, value, instance, node)

    keywords = {"pattern": pattern, "uniqueItems": unique_items}
    return jsonschema.validators.extend(base, keywords)  # type: ignore[no-untyped-call]
